/**
 * Every failure of a gateway call. `status` and `code` come from the gateway's answer (docs/gateway.md §7);
 * failures that never got one use status 0 and the codes of the subclasses below. Waiting for a
 * job rejects with two more of them: {@link JobFailedError} and {@link WaitTimeoutError}.
 * Nothing in them contains the API key or a secret_key: whatever the gateway sent (its error text,
 * a request id, a failed job's report) has every form of both replaced by `[redacted]`.
 */
export class GatewayError extends Error {
  override name = 'GatewayError';
  /** HTTP status of the answer; 0 when there was none. */
  readonly status: number;
  /** `error.code` of the answer (`invalid_request`, `unauthorized`, `not_found`, ...). */
  readonly code: string;
  /** `request_id` of the answer, for support; undefined when there was none. */
  readonly requestId: string | undefined;
  /** Seconds from a Retry-After header, when the gateway sent one; at most 86,400 (a longer one reads as a day). */
  readonly retryAfterSeconds: number | undefined;

  constructor(
    message: string,
    details: {
      status: number;
      code: string;
      requestId?: string | undefined;
      retryAfterSeconds?: number;
      cause?: unknown;
    },
  ) {
    super(message, details.cause === undefined ? undefined : { cause: details.cause });
    this.status = details.status;
    this.code = details.code;
    this.requestId = details.requestId;
    this.retryAfterSeconds = details.retryAfterSeconds;
  }
}

/**
 * A 2xx answer whose `data` is not what the endpoint gives (`code` `invalid_response`): a task
 * poll with no task record, a list with neither an array nor `items`. `what` is `GET <path>`.
 */
export function invalidResponse(what: string, detail: string): GatewayError {
  return new GatewayError(`${what} failed (200 invalid_response): ${detail}.`, {
    status: 200,
    code: 'invalid_response',
  });
}

/**
 * A listing (`webhooks.list`) holds more than the client keeps of one (`code` `listing_too_large`):
 * more than 10,000 items (`MAX_LIST_ITEMS`), or pages longer than `maxResponseBytes` in all. The
 * client stopped reading: a gateway decides how many pages it sends and how long they are.
 */
export function listingTooLarge(what: string, status: number, detail: string): GatewayError {
  return new GatewayError(
    `${what} failed (${status} listing_too_large): ${detail}; the client stopped reading.`,
    {
      status,
      code: 'listing_too_large',
    },
  );
}

/**
 * The request never got an answer: DNS, refused or reset connection. `code` is `network_error`.
 * `cause` is a copy of what fetch threw, with every form of the API key and secret_key redacted:
 * its name, message, stack, plain fields such as `code` (`ECONNREFUSED`) and its own causes, but
 * no other object it referred to (a request's headers carry the key).
 */
export class GatewayNetworkError extends GatewayError {
  override name = 'GatewayNetworkError';
  constructor(message: string, cause: unknown) {
    super(message, { status: 0, code: 'network_error', cause });
  }
}

/** No answer within `timeoutMs`. `code` is `timeout`. */
export class GatewayTimeoutError extends GatewayError {
  override name = 'GatewayTimeoutError';
  constructor(message: string) {
    super(message, { status: 0, code: 'timeout' });
  }
}

/**
 * The answer's body was longer than the client's `maxResponseBytes`: the client stopped reading
 * at the cap and cancelled the rest. `code` is `response_too_large`; `status` is the answer's.
 */
export class GatewayResponseTooLargeError extends GatewayError {
  override name = 'GatewayResponseTooLargeError';
  constructor(message: string, status: number, requestId?: string) {
    super(message, { status, code: 'response_too_large', requestId });
  }
}

/**
 * The gateway redirected to another origin (scheme, host or port), or redirected more times than
 * the client follows. The client never sends the API key or a request body to another origin.
 * `code` is `redirect_refused`; `status` is the redirect's (301, 302, 303, 307 or 308).
 */
export class GatewayRedirectError extends GatewayError {
  override name = 'GatewayRedirectError';
  constructor(message: string, status: number, requestId?: string) {
    super(message, { status, code: 'redirect_refused', requestId });
  }
}

/**
 * The job ended in `failed` (`client.images.waitFor`, `generateAndWait`). `code` and `message` are
 * the job's error as the gateway reported it (`generation_failed`, say), with the API key
 * redacted, as in `task`; `status` is 0, since no HTTP call failed. The credits a submission
 * charged are not refunded by the wait.
 */
export class JobFailedError extends GatewayError {
  override name = 'JobFailedError';
  /** The failed task. */
  readonly taskId: string;
  /** The failed task as the gateway reported it (webhook `data` or `images.get` answer), redacted. */
  readonly task: Readonly<Record<string, unknown>>;

  constructor(taskId: string, error: { code: string; message: string }, task: Record<string, unknown>) {
    super(error.message, { status: 0, code: error.code });
    this.taskId = taskId;
    this.task = task;
  }
}

/**
 * A wait (`client.images.waitFor`, `generateAndWait`) reached its `timeoutMs` before the job ended.
 * `code` is `wait_timeout`. Only the wait stopped: the job keeps running at the gateway, and
 * `waitFor(error.taskId)` or `images.get(error.taskId)` can pick it up again.
 */
export class WaitTimeoutError extends GatewayError {
  override name = 'WaitTimeoutError';
  /** The task that has not ended yet. */
  readonly taskId: string;
  /** How long the wait lasted, in ms. */
  readonly timeoutMs: number;

  constructor(taskId: string, timeoutMs: number) {
    super(
      `Task ${taskId} did not end within ${timeoutMs} ms. The job keeps running at the gateway: ` +
        `wait again with client.images.waitFor(${JSON.stringify(taskId)}) or read it with images.get.`,
      { status: 0, code: 'wait_timeout' },
    );
    this.taskId = taskId;
    this.timeoutMs = timeoutMs;
  }
}
