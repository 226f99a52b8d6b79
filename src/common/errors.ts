/** What went wrong, as a stable string a program can switch on. */
export type JobhookErrorCode =
  'invalid_options' | 'handler_failed' | 'handler_timeout' | 'verifier_failed' | 'dedupe_store_failed';

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
