import { TIMED_OUT, within, isThenable } from '../common/deadline.js';
import { JobhookError } from '../common/errors.js';
import { messageOf, ignore } from '../common/logging.js';

/** How an event reached the receiver: a webhook delivery, or a poll of the gateway (reconciling). */
export type DeliverySource = 'webhook' | 'poll';

/** What a handler learns about the delivery besides its payload. */
export interface DeliveryContext {
  /** The sender's delivery id (`webhook-id`, else the payload's `id`), stable across retries. */
  deliveryId: string | undefined;
  /** The event type. */
  type: string;
  /**
   * The tenant whose secret verified the delivery, with a `secret` function: the name it returned
   * with `{ tenant, secret }`, else `secrets:` and a fingerprint of its secrets. `undefined` for a
   * receiver with a fixed secret.
   */
  tenant: string | undefined;
  /** `'webhook'` for a delivery, `'poll'` for an outcome the receiver found by polling the gateway. */
  source: DeliverySource;
  /**
   * Aborted when the handler timeout passes: long work should stop then by rejecting (say with
   * `signal.throwIfAborted()`), so that the retry runs it again. A handler that returns normally
   * after its timeout counts as a late success, and the event is then done.
   */
  signal: AbortSignal;
  /**
   * Which attempt at this event this run is, from 1, when a queue worker runs it (a hand-off's
   * `runWorker`, `runPgBossWorker`, `runNatsWorker`); it counts on when a failed event is retried
   * by hand. `undefined` for a delivery handled in the request: the sender's retries are its own.
   */
  attempt: number | undefined;
}

/**
 * A handler for one event type; it may be async. If it throws, rejects or times out, the delivery
 * answers 500 and the gateway retries it.
 */
export type EventHandler<E> = (event: E, context: DeliveryContext) => unknown;

/**
 * The handlers' outcome when the delivery is answered. `late` is set when the timeout passed with
 * handlers still running: it resolves, once they all settle, with every failure (the timeout not
 * counted), so the claim is completed or released only then.
 */
export interface HandlerRun {
  failures: JobhookError[];
  late?: Promise<JobhookError[]>;
}

/** What the handler context is made of. */
export interface HandledEvent {
  deliveryId: string | undefined;
  type: string;
  tenant: string | undefined;
  source: DeliverySource;
  attempt: number | undefined;
}

/**
 * Runs one delivery's handlers concurrently and gives their failures (empty when all succeeded):
 * at once when no handler returned a promise, else as a promise. Past `timeoutMs` it stops
 * waiting, aborts `context.signal` and reports a timeout. Never throws nor rejects.
 */
export function runHandlers<E>(
  handlers: readonly EventHandler<E>[],
  event: E,
  delivery: HandledEvent,
  timeoutMs: number,
): JobhookError[] | Promise<HandlerRun> {
  const context = new HandlerContext(
    delivery.deliveryId,
    delivery.type,
    delivery.tenant,
    delivery.source,
    delivery.attempt,
  );
  const failures: JobhookError[] = [];
  // Handlers start one after another, synchronously, as an async wrapper around each would.
  let running: Promise<void>[] | undefined;
  for (const handler of handlers) {
    try {
      const result = handler(event, context);
      if (isThenable(result)) {
        (running ??= []).push(
          Promise.resolve(result).then(ignore, (error: unknown) => {
            failures.push(failureOf(error, context, delivery));
          }),
        );
      }
    } catch (error) {
      failures.push(failureOf(error, context, delivery));
    }
  }
  // Handlers that returned no promise are done: nothing to wait for, no timer to set.
  if (!running) return failures;
  return waitWithin(running, failures, delivery, timeoutMs, (reason) =>
    HandlerContext.abort(context, reason),
  );
}

/**
 * What a handler's throw or rejection is reported as. A handler that stopped on its signal rejects
 * with the timeout, already reported: it stays the failure it is, not a second error. (A function
 * of its own: a closure made per delivery cost its allocation on the path where nothing fails.)
 */
function failureOf(
  error: unknown,
  context: HandlerContext,
  delivery: { deliveryId: string | undefined; type: string },
): JobhookError {
  const abortReason = HandlerContext.abortReason(context);
  if (error !== undefined && error === abortReason) return abortReason;
  return new JobhookError('handler_failed', `A ${delivery.type} handler failed: ${messageOf(error)}`, {
    cause: error,
    deliveryId: delivery.deliveryId,
    eventType: delivery.type,
  });
}

/**
 * The context handlers get. A class rather than an object literal with a getter: V8 makes such a
 * literal (spread in, accessor added) slowly, on every delivery. The signal is made when a handler
 * first reads it (an AbortController costs more than a fast handler): one read after the timeout
 * gets a signal that is already aborted.
 */
class HandlerContext implements DeliveryContext {
  #controller: AbortController | undefined = undefined;
  #abortReason: JobhookError | undefined = undefined;
  constructor(
    readonly deliveryId: string | undefined,
    readonly type: string,
    readonly tenant: string | undefined,
    readonly source: DeliverySource,
    readonly attempt: number | undefined,
  ) {}

  get signal(): AbortSignal {
    if (!this.#controller) {
      this.#controller = new AbortController();
      if (this.#abortReason) this.#controller.abort(this.#abortReason);
    }
    return this.#controller.signal;
  }

  // Static, so that handlers see only the context's own fields and `signal`.
  static abortReason(context: HandlerContext): JobhookError | undefined {
    return context.#abortReason;
  }

  static abort(context: HandlerContext, reason: JobhookError): void {
    context.#abortReason = reason;
    context.#controller?.abort(reason);
  }
}

/** Waits for the handlers that returned promises, at most `timeoutMs`. */
async function waitWithin(
  running: Promise<void>[],
  failures: JobhookError[],
  delivery: { deliveryId: string | undefined; type: string },
  timeoutMs: number,
  abort: (reason: JobhookError) => void,
): Promise<HandlerRun> {
  const all = Promise.all(running).then(() => failures);
  if ((await within(all, timeoutMs)) !== TIMED_OUT) return { failures };
  const timeout = new JobhookError(
    'handler_timeout',
    `A ${delivery.type} handler did not finish within ${timeoutMs} ms.`,
    { deliveryId: delivery.deliveryId, eventType: delivery.type },
  );
  abort(timeout);
  // A copy: failures that come later belong to `late`.
  return { failures: [...failures, timeout], late: all };
}
