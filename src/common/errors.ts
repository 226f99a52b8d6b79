// JobhookError, the one error jobhook throws at developers (option checks: option-checks.ts).

/** What went wrong, for a program to switch on; what a sender did wrong is an answer (`AnswerCode`) instead. */
export type JobhookErrorCode =
  | 'invalid_options'
  | 'handler_failed'
  | 'handler_timeout'
  | 'dedupe_store_failed'
  | 'handoff_failed'
  | 'invalid_job'
  | 'job_tracker_failed'
  | 'inbox_failed'
  | 'confirm_mismatch'
  | 'outcome_conflict';

/** jobhook's error for developers: thrown for a mistake in options, given to `onError` for a failure. */
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
