import { JobhookError } from '../common/errors.js';
import { quote } from '../common/logger.js';
import { isThenable } from '../common/thenable.js';
import type { EventSchemas } from '../events/schemas.js';
import { checkPayload } from './parse-event.js';
import { runHandlers, type EventHandler, type HandlerRun } from './run-handlers.js';
import type { HandoffJob, QueuedAttempt } from '../handoff/handoff.js';
import type { ReportFailures } from './failures.js';
import type { ObservedHandoff } from './observe.js';

/** What `receiver.handleQueued` needs of its receiver. */
export interface QueuedJobDeps {
  schemas: EventSchemas;
  /** The handlers for a type: its own (when it has a schema) and the `onAny` ones. */
  handlersFor(type: string, known: boolean): readonly EventHandler<unknown>[];
  handlerTimeoutMs: number;
  /** Gives failures to `onError` (or the log). */
  report: ReportFailures;
  /** Work that outlives the job's attempt (a handler past its time-out): `close()` waits for it. */
  track(work: Promise<unknown>): void;
  /** A worker took up a handed-off event for the first time: the observer's `handoff()`. */
  startedFirst?: ((handoff: ObservedHandoff) => void) | undefined;
}

/**
 * `receiver.handleQueued(job)`: validates the queued payload with the receiver's schemas, runs
 * the handlers as a delivery would (the handler time-out, `context.signal`, `onError`), resolves
 * when they all succeeded, and rejects with the first failure otherwise, so that the queue retries
 * the job. No signature check: the receiver that queued the job checked it, and nothing from the
 * network reaches this function (no adapter, `receive` or `fetch` calls it).
 *
 * Unlike a delivery, the attempt fails at the time-out even while a handler still runs (its signal
 * is aborted): a handler that never settles must not hold a job forever, invisible to retries.
 * A job that is not one (`invalid_job`) is refused: retrying cannot mend it.
 */
export function queuedJobRunner(
  deps: QueuedJobDeps,
): (job: HandoffJob, attempt?: QueuedAttempt) => Promise<void> {
  return async (job, attempt) => {
    if (!isHandoffJob(job)) {
      throw new JobhookError(
        'invalid_job',
        'handleQueued takes a job a hand-off stored: { key, type, deliveryId, payload, receivedAt }.',
      );
    }
    // The time from hand-off to first start; a retry's start would count its backoff too.
    if (attempt?.attempt === 1 && typeof job.receivedAt === 'number') {
      deps.startedFirst?.({
        deliveryId: job.deliveryId,
        type: job.type,
        latencyMs: Math.max(0, Date.now() - job.receivedAt),
      });
    }
    const delivery = {
      deliveryId: job.deliveryId,
      type: job.type,
      source: job.source === 'poll' ? ('poll' as const) : ('webhook' as const),
    };
    const checking = checkPayload(job.payload, deps.schemas);
    const checked = isThenable(checking) ? await checking : checking;
    if (!checked.ok || checked.type !== job.type) {
      const why = checked.ok ? `its payload is of type ${quote(checked.type)}` : checked.message;
      const error = new JobhookError(
        'invalid_job',
        `The queued ${job.type} event ${quote(job.key)}: ${why}`,
        {
          deliveryId: job.deliveryId,
          eventType: job.type,
        },
      );
      deps.report([error], delivery);
      throw error;
    }
    const handlers = deps.handlersFor(checked.type, checked.known);
    const ran = runHandlers(handlers, checked.event, delivery, deps.handlerTimeoutMs);
    const run: HandlerRun = Array.isArray(ran) ? { failures: ran } : await ran;
    if (run.late) deps.track(run.late);
    if (run.failures.length === 0) return;
    deps.report(run.failures, delivery);
    throw run.failures[0]!;
  };
}

function isHandoffJob(job: unknown): job is HandoffJob {
  if (typeof job !== 'object' || job === null) return false;
  const { key, type, deliveryId } = job as Record<string, unknown>;
  return (
    (key === undefined || typeof key === 'string') &&
    typeof type === 'string' &&
    (deliveryId === undefined || deliveryId === null || typeof deliveryId === 'string') &&
    'payload' in job
  );
}
