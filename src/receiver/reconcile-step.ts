import type { SafeLogger } from '../common/logger.js';
import type { EventSchemas } from '../events/schemas.js';
import { checkPayload } from './parse-event.js';
import type { ReconcileObserver } from '../reconcile/observer.js';
import { resolveReconcile, type ReconcileOptions } from '../reconcile/options.js';
import { outcomeKey } from '../reconcile/polled-event.js';
import { createReconciler, type DispatchOutcome, type Reconciler } from '../reconcile/reconciler.js';

/** An event found by polling, validated, to run from the claim step on. */
export interface PolledRun {
  type: string;
  event: unknown;
  key: string;
  source: 'poll';
  deliveryId: string;
}

/** What the receiver's pipeline made of it. */
export type PolledRunOutcome = 'handled' | 'duplicate' | 'in_progress' | 'failed';

/**
 * The reconciler of one receiver: a polled outcome is validated with the receiver's schemas (as
 * a webhook's payload is), then runs through the receiver's claim, handlers and settle steps
 * (`run`), under the one key of the task's outcome.
 */
export function receiverReconciler(deps: {
  options: ReconcileOptions;
  schemas: EventSchemas;
  run: (event: PolledRun) => Promise<PolledRunOutcome>;
  logger: SafeLogger;
  observer: ReconcileObserver | undefined;
  now: () => number;
}): Reconciler {
  return createReconciler({
    options: resolveReconcile(deps.options),
    logger: deps.logger,
    observer: deps.observer,
    now: deps.now,
    async dispatch(polled): Promise<DispatchOutcome> {
      const parsed = await checkPayload(polled.payload, deps.schemas);
      if (!parsed.ok) {
        deps.logger.warn(`jobhook: refused a polled outcome (400): ${parsed.message}`);
        return 'invalid';
      }
      const outcome = await deps.run({
        type: parsed.type,
        event: parsed.event,
        key: polled.key,
        source: 'poll',
        deliveryId: polled.payload.id,
      });
      return outcome === 'in_progress' ? 'busy' : outcome;
    },
  });
}

/**
 * The dedupe key of a webhook's job outcome when the receiver reconciles: the task's, so that the
 * webhook and a poll of the same task converge on one key. `undefined` for any other event.
 */
export function webhookOutcomeKey(type: string, event: unknown): string | undefined {
  const taskId = taskIdOf(type, event);
  return taskId === undefined ? undefined : outcomeKey(taskId);
}

/** The task id of a job outcome, to tell the tracker its webhook settled it. */
export function taskIdOf(type: string, event: unknown): string | undefined {
  if (type !== 'job.completed' && type !== 'job.failed') return undefined;
  const taskId = (event as { data?: { task_id?: unknown } } | null)?.data?.task_id;
  return typeof taskId === 'string' && taskId.length > 0 ? taskId : undefined;
}
