/** What the receiver answers: adapters copy it onto their framework's response as it is. */
export interface ReceiverResponse {
  status: number;
  headers: Record<string, string>;
  body: string;
}

/** The error codes of the receiver's answers, in the JSON body as `error.code`: a closed list. */
export const ANSWER_CODES = [
  'invalid_signature',
  'invalid_json',
  'invalid_payload',
  'method_not_allowed',
  'not_found',
  'payload_too_large',
  'unsupported_encoding',
  'body_unreadable',
  'body_timeout',
  'in_progress',
  'handler_failed',
  'body_unavailable',
  'shutting_down',
  'handoff_failed',
  'inbox_failed',
  'unconfirmed',
  'internal_error',
] as const;

/** An answer's `error.code`: one of a closed list, each in the README's answers table. */
export type AnswerCode = (typeof ANSWER_CODES)[number];

function respond(status: number, body: string, extraHeaders?: Record<string, string>): ReceiverResponse {
  const headers: Record<string, string> = {
    'content-type': 'application/json; charset=utf-8',
    'cache-control': 'no-store',
  };
  if (extraHeaders) Object.assign(headers, extraHeaders);
  return { status, headers, body };
}

function failure(status: number, code: AnswerCode, message: string, extraHeaders?: Record<string, string>) {
  return respond(status, JSON.stringify({ ok: false, error: { code, message } }), extraHeaders);
}

const OK = JSON.stringify({ ok: true });
const DUPLICATE = JSON.stringify({ ok: true, duplicate: true });

// Messages are fixed or come from jobhook's own checks: no secret, signature or stack reaches them.
export const answers = {
  ok: () => respond(200, OK),
  duplicate: () => respond(200, DUPLICATE),
  inProgress: () =>
    failure(409, 'in_progress', 'This delivery is being handled right now; retry later.', {
      'retry-after': '1',
    }),
  /** `text`: the refusal's fixed text (`refusalText`), never a verifier's detail. */
  invalidSignature: (text: string) => failure(401, 'invalid_signature', text),
  invalidJson: (message: string) => failure(400, 'invalid_json', message),
  invalidPayload: (message: string) => failure(400, 'invalid_payload', message),
  methodNotAllowed: () =>
    failure(405, 'method_not_allowed', 'Webhook deliveries must be sent with POST.', { allow: 'POST' }),
  notFound: () => failure(404, 'not_found', 'No webhook endpoint at this path.'),
  /** `encoding`: the request's Content-Encoding made printable and short. */
  unsupportedEncoding: (encoding: string) =>
    failure(
      415,
      'unsupported_encoding',
      `The body is sent with Content-Encoding "${encoding}": send it without a content encoding, ` +
        'since its signature is checked on the bytes as they arrive.',
    ),
  tooLarge: (limit: number) =>
    failure(413, 'payload_too_large', `The body is larger than the receiver's limit of ${limit} bytes.`),
  // The connection is closed after it: a sender that trickles must not keep it.
  bodyTimeout: (ms: number) =>
    failure(408, 'body_timeout', `The body did not arrive within ${ms} ms.`, { connection: 'close' }),
  bodyUnreadable: () => failure(400, 'body_unreadable', 'The request body could not be read to its end.'),
  handlerFailed: () =>
    failure(500, 'handler_failed', 'A handler failed to process this delivery; it will run again on retry.'),
  // Brief: the fix is for the app's owner, in the log (src/receiver/body-unavailable.ts).
  bodyUnavailable: () =>
    failure(
      500,
      'body_unavailable',
      "The receiver could not read the request's raw body, so its signature cannot be checked; retry later.",
    ),
  shuttingDown: () =>
    failure(503, 'shutting_down', 'The receiver is shutting down; retry later.', { 'retry-after': '5' }),
  handoffFailed: () =>
    failure(503, 'handoff_failed', 'The event could not be queued right now; retry later.', {
      'retry-after': '5',
    }),
  inboxFailed: () =>
    failure(503, 'inbox_failed', 'The delivery could not be stored right now; retry later.', {
      'retry-after': '5',
    }),
  /** Confirm mode: the gateway could not be asked about the task now (429, 5xx, a limit); `seconds`: Retry-After. */
  unconfirmed: (seconds: number) =>
    failure(
      503,
      'unconfirmed',
      "The task's outcome could not be confirmed with the gateway right now; retry later.",
      {
        'retry-after': String(Math.max(1, Math.ceil(seconds))),
      },
    ),
  internal: () => failure(500, 'internal_error', 'The receiver failed unexpectedly; retry later.'),
};
