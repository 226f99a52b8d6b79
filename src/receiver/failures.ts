import type { JobhookError } from '../common/errors.js';
import { messageOf, quote, type SafeLogger } from '../common/logging.js';
import { type Redact } from '../common/redaction.js';
import type { InFlight } from './in-flight.js';
import type { ErrorHandler } from './types.js';

/** The longest stack written to the log, in characters: enough for the frames that matter. */
const MAX_STACK = 4_000;

/**
 * The stack of the error a failure wraps, as lines to append to its log line (`''` when there is
 * none: a time-out, a thrown string). Never throws, whatever the thrown value's getters do.
 */
function causeStack(failure: JobhookError): string {
  try {
    const { cause } = failure;
    if (!(cause instanceof Error) || typeof cause.stack !== 'string') return '';
    const stack = cause.stack.length > MAX_STACK ? `${cause.stack.slice(0, MAX_STACK)}…` : cause.stack;
    return `\n  caused by ${stack.replace(/\n/g, '\n  ')}`;
  } catch {
    return '';
  }
}

/** The delivery as `onError` sees it. */
export interface DeliveryInfo {
  deliveryId: string | undefined;
  type: string;
  /** The tenant the event belongs to, with a `secret` function (see `DeliveryContext.tenant`). */
  tenant: string | undefined;
}

/** Hands failures to `onError` (or the log) without ever waiting for it. */
export type ReportFailures = (failures: readonly JobhookError[], delivery: DeliveryInfo) => void;

/**
 * The one way a receiver reports a failure: to each `onError` handler (not awaited: `close()`
 * waits for it instead), or to the log when there is none. What jobhook wraps never carries a
 * secret: the message (and so the stack) of each `JobhookError` is redacted (a handler or a store that
 * quoted the secret in its error). The `cause` is the value as it was thrown, kept as it is.
 */
export function failureReporter(
  errorHandlers: readonly ErrorHandler[],
  redact: Redact,
  logger: SafeLogger,
  lifecycle: Pick<InFlight, 'track'>,
): ReportFailures {
  const handlerFailed = (error: unknown) =>
    logger.error(`jobhook: an onError handler failed: ${messageOf(error)}`);

  function callErrorHandler(handler: ErrorHandler, failure: JobhookError, delivery: DeliveryInfo) {
    try {
      const result = handler(failure, delivery);
      if (result !== undefined) lifecycle.track(Promise.resolve(result).then(undefined, handlerFailed));
    } catch (error) {
      handlerFailed(error);
    }
  }

  return (failures, delivery) => {
    for (const failure of failures) {
      // Before anything reads `stack`: V8 writes its first line from the message when it is first
      // read, so the stack is redacted too, at no cost (formatting a stack is not cheap).
      failure.message = redact(failure.message);
      if (errorHandlers.length === 0) {
        // With the stack of what the handler threw, so the failing line can be found from the log
        // alone; the logger redacts the secrets from the whole line, stack included.
        logger.error(
          `jobhook: delivery ${quote(delivery.deliveryId)}: ${failure.message}${causeStack(failure)}`,
        );
      }
      for (const handler of errorHandlers) callErrorHandler(handler, failure, delivery);
    }
  };
}
