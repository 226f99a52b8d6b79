/**
 * What went wrong, as a stable string a program can switch on:
 * - `invalid_options`: a mistake in what you passed (thrown at once, by `createReceiver`, the
 *   verifier presets, `createClient`, `registerWebhook`, `signDelivery`, a handler method);
 * - `handler_failed`: a handler threw or rejected (given to `onError`, the original as `cause`);
 * - `handler_timeout`: a handler did not settle within `handlerTimeoutMs` (given to `onError`);
 * - `dedupe_store_failed`: a shared dedupe store (Redis, Postgres) failed or did not answer in
 *   time; the delivery is answered 500 so the sender retries, and the lease frees the key;
 * - `handoff_failed`: a hand-off (`jobhook/bullmq`) could not store the event, or not in time; the
 *   delivery is answered 503 so the sender retries (given to `onError`);
 * - `invalid_job`: `receiver.handleQueued` was given something that is no queued job, or a queued
 *   payload that no longer matches the receiver's schemas (retrying cannot mend it);
 * - `job_tracker_failed`: a shared job tracker (Redis, Postgres) failed or did not answer in time;
 *   a submission still succeeds (logged), a reconcile pass tries again next time.
 *
 * What a sender did wrong is never an error: it is an answer (see the `AnswerCode`s).
 */
export type JobhookErrorCode =
  | 'invalid_options'
  | 'handler_failed'
  | 'handler_timeout'
  | 'dedupe_store_failed'
  | 'handoff_failed'
  | 'invalid_job'
  | 'job_tracker_failed';

/**
 * The error type of jobhook's receiving side. Configuration mistakes throw it from
 * `createReceiver`; handler failures reach `onError` as one, with the original error as `cause`.
 * Its message never contains a secret or a signature.
 */
export class JobhookError extends Error {
  override readonly name = 'JobhookError';
  readonly code: JobhookErrorCode;
  /** The delivery this error belongs to, when there is one. */
  readonly deliveryId: string | undefined;
  /** The event type being handled, when there is one. */
  readonly eventType: string | undefined;

  constructor(
    code: JobhookErrorCode,
    message: string,
    details: { cause?: unknown; deliveryId?: string | undefined; eventType?: string | undefined } = {},
  ) {
    super(message, details.cause === undefined ? undefined : { cause: details.cause });
    this.code = code;
    this.deliveryId = details.deliveryId;
    this.eventType = details.eventType;
  }
}
