import { TIMED_OUT, within } from '../common/deadline.js';
import { JobhookError } from '../common/errors.js';
import { messageOf, ignore, quote } from '../common/logging.js';

/** How an event reached the receiver: a webhook delivery, a poll of the gateway (reconciling), or a replay from the inbox. */
export type DeliverySource = 'webhook' | 'poll' | 'replay';

/** What a handler learns about the delivery besides its payload. */
export interface DeliveryContext {
  /** The sender's delivery id (`webhook-id`, else the payload's `id`), stable across retries. */
  deliveryId: string | undefined;
  /** The event type. */
  type: string;
  /** With a `secret` function, the tenant the event belongs to (see `TenantSecrets`). */
  tenant: string | undefined;
  /** `'webhook'` for a delivery, `'poll'` for an outcome found by polling the gateway, `'replay'` for `receiver.replay()`. */
  source: DeliverySource;
  /** Aborted at the handler time-out: stop and reject (`signal.throwIfAborted()`) so the retry runs it again. */
  signal: AbortSignal;
  /** From 1, counting retries, when a queue worker or the inbox runs the event; `undefined` for a delivery answered at once. */
  attempt: number | undefined;
  /** `true` when the event is the gateway's own answer: confirm mode (`createReceiver({ confirm })`) or a poll. */
  confirmed: boolean;
}

/** A handler for one event type; it may be async. A throw, rejection or time-out makes the event run again on retry. */
export type EventHandler<E> = (event: E, context: DeliveryContext) => unknown;

/** The handlers' failures; `late`, past the time-out, settles with every failure once they all have. */
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
  confirmed: boolean;
}

/**
 * Runs an event's handlers concurrently and gives their failures: at once when none returned a
 * promise (no timer then), else within `timeoutMs`, past which `context.signal` aborts. Never throws.
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
    delivery.confirmed,
  );
  const failures: JobhookError[] = [];
  let running: Promise<void>[] | undefined;
  for (const handler of handlers) {
    try {
      const result = handler(event, context);
      // A handler that returns something is waited for; one that returns nothing is done.
      if (result !== undefined) {
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
  if (!running) return failures;
  return waitWithin(running, failures, delivery, timeoutMs, (reason) =>
    HandlerContext.abort(context, reason),
  );
}

/** A handler's throw as a failure; one that stopped on its signal rejects with the time-out, reported already. */
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

/** The context handlers get; its signal is made only when a handler reads it. */
class HandlerContext implements DeliveryContext {
  #controller: AbortController | undefined = undefined;
  #abortReason: JobhookError | undefined = undefined;
  constructor(
    readonly deliveryId: string | undefined,
    readonly type: string,
    readonly tenant: string | undefined,
    readonly source: DeliverySource,
    readonly attempt: number | undefined,
    readonly confirmed: boolean,
  ) {}

  get signal(): AbortSignal {
    if (!this.#controller) {
      this.#controller = new AbortController();
      if (this.#abortReason) this.#controller.abort(this.#abortReason);
    }
    return this.#controller.signal;
  }

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
  const timeout = new JobhookError('handler_timeout', timedOutMessage(delivery.type, timeoutMs), {
    deliveryId: delivery.deliveryId,
    eventType: delivery.type,
  });
  abort(timeout);
  return { failures: [...failures, timeout], late: all };
}

/** A handler's time-out, with the ways out: work this long belongs outside the request. */
function timedOutMessage(type: string, timeoutMs: number): string {
  return (
    `A ${type} handler did not finish within ${timeoutMs} ms (handlerTimeoutMs), so the event failed and is ` +
    'retried; the handler keeps running, and a retry waits for it. For longer work, hand the event off ' +
    '(createReceiver({ handoff }) with a queue, or store it in an inbox table and answer at once), raise ' +
    'handlerTimeoutMs, or stop on context.signal so that the retry runs it again.'
  );
}

/**
 * The line said when handlers that outlived their time-out have all settled: whether they
 * succeeded, and so whether the event counts as handled. `failures`: every failure of the run.
 */
export function lateSettledLine(
  delivery: { deliveryId: string | undefined; type: string },
  failures: readonly JobhookError[],
  timeout: JobhookError | undefined,
  claimed: boolean,
): string {
  const which = `jobhook: delivery ${quote(delivery.deliveryId)}: the ${delivery.type} handlers that outlived their time-out`;
  if (failures.length === 0) {
    const retry = claimed ? ', and a retry of it is answered 200 as a duplicate' : '';
    return `${which} finished and succeeded: the event is handled${retry}.`;
  }
  const stopped = timeout !== undefined && failures.every((failure) => failure === timeout);
  const again = "the event is not handled, and the sender's next retry runs it again";
  return stopped
    ? `${which} stopped on context.signal: ${again}.`
    : `${which} finished, and ${failures.length === 1 ? 'one failed' : `${failures.length} failed`} (reported): ${again}.`;
}
