/**
 * Every failure of a gateway call: `status` and `code` come from the gateway's answer, or status 0
 * and a subclass's code when there was none. Nothing in it holds the API key or a secret_key:
 * whatever the gateway sent has every form of both replaced by `[redacted]`.
 */
export class GatewayError extends Error {
  override name = 'GatewayError';
  /** HTTP status of the answer; 0 when there was none. */
  readonly status: number;
  /** `error.code` of the answer (`invalid_request`, `unauthorized`, `not_found`, ...). */
  readonly code: string;
  /** `request_id` of the answer, for support. */
  readonly requestId: string | undefined;
  /** Seconds from a Retry-After header, at most 86,400. */
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

/** A 2xx answer whose `data` is not what the endpoint gives (`invalid_response`); `what` is `GET <path>`. */
export function invalidResponse(what: string, detail: string): GatewayError {
  return new GatewayError(`${what} failed (200 invalid_response): ${detail}.`, {
    status: 200,
    code: 'invalid_response',
  });
}

/** A listing past 10,000 items or `maxResponseBytes` in all (`listing_too_large`): the client stops. */
export function listingTooLarge(what: string, status: number, detail: string): GatewayError {
  return new GatewayError(
    `${what} failed (${status} listing_too_large): ${detail}; the client stopped reading.`,
    {
      status,
      code: 'listing_too_large',
    },
  );
}

/** No answer (`network_error`); `cause` is a redacted copy of what fetch threw. */
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

/** An answer longer than `maxResponseBytes`, cut at the cap (`response_too_large`). */
export class GatewayResponseTooLargeError extends GatewayError {
  override name = 'GatewayResponseTooLargeError';
  constructor(message: string, status: number, requestId?: string) {
    super(message, { status, code: 'response_too_large', requestId });
  }
}

/** A redirect to another origin, or too many (`redirect_refused`): the key never leaves its origin. */
export class GatewayRedirectError extends GatewayError {
  override name = 'GatewayRedirectError';
  constructor(message: string, status: number, requestId?: string) {
    super(message, { status, code: 'redirect_refused', requestId });
  }
}

/** The job failed: `code` and `message` are its error as the gateway reported it; `status` is 0. */
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

/** A wait reached its `timeoutMs` (`wait_timeout`); the job goes on: `waitFor(error.taskId)` again. */
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
