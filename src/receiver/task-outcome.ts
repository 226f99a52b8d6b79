import { JobhookError } from '../common/errors.js';
import type { DedupeStore } from '../dedupe/dedupe-store.js';
import { scopedKey } from '../results/job-result.js';
import { whenSettled } from '../common/deadline.js';
import { STORE_FAILED, type Claim, type ClaimFor, type ClaimTaken, type DeliveryClaims } from './claims.js';

/**
 * One job, one outcome: the first outcome handled for a task wins, marked in the dedupe store (so
 * across restarts and instances when the store is shared) as `outcome:<task id>:<type>`. An event
 * claims both marks of its task in one order, so two outcomes never run at once.
 */
const OUTCOMES = ['job.completed', 'job.failed'] as const;

/** What the gate found: run (holding the marks it claimed), a conflict, or wait. */
export type OutcomeGate =
  | { run: true; marks: Claim[] }
  | { run: false; answer: 'conflict'; winner: string }
  | { run: false; answer: 'busy' | typeof STORE_FAILED };

/**
 * The task's marks for one job outcome event of `type` (`undefined`: not a job outcome, nothing to
 * gate); at once from a store that answers at once.
 */
export function gateOutcome(
  claims: DeliveryClaims,
  store: DedupeStore,
  event: { type: string; taskId: string | undefined; tenant: string | undefined; delivery: ClaimFor },
): OutcomeGate | Promise<OutcomeGate> | undefined {
  const { type, taskId, tenant, delivery } = event;
  if (taskId === undefined || !(OUTCOMES as readonly string[]).includes(type)) return undefined;
  const mark = (outcome: string) =>
    claims.take(store, scopedKey(tenant, `outcome:${taskId}:${outcome}`), delivery);
  return whenSettled(mark(COMPLETED), (completed) =>
    whenSettled(mark(FAILED), (failed) => verdictOf(claims, type, completed, failed, delivery)),
  );
}

const [COMPLETED, FAILED] = OUTCOMES;

function verdictOf(
  claims: DeliveryClaims,
  type: string,
  completed: ClaimTaken,
  failed: ClaimTaken,
  delivery: ClaimFor,
): OutcomeGate | Promise<OutcomeGate> {
  const [own, other] = type === COMPLETED ? [completed, failed] : [failed, completed];
  const held = [completed, failed].filter((taken): taken is Claim => typeof taken === 'object');
  const verdict: OutcomeGate =
    other === 'done'
      ? { run: false, answer: 'conflict', winner: type === COMPLETED ? FAILED : COMPLETED }
      : own === STORE_FAILED || other === STORE_FAILED
        ? { run: false, answer: STORE_FAILED }
        : own === 'busy' || other === 'busy'
          ? { run: false, answer: 'busy' }
          : { run: true, marks: held };
  if (verdict.run) return verdict;
  return whenSettled(settleMarks(claims, held, type, false, delivery), () => verdict);
}

/** Settles the marks in turn: with `ok`, the event's own outcome is marked handled; the other is freed. */
export function settleMarks(
  claims: DeliveryClaims,
  marks: readonly Claim[],
  type: string,
  ok: boolean,
  delivery: ClaimFor,
): void | Promise<void> {
  let settling: void | Promise<void> = undefined;
  for (const mark of marks) {
    settling = whenSettled(settling, () =>
      claims.completeOrRelease(mark, ok && mark.key.endsWith(`:${type}`), delivery),
    );
  }
  return settling;
}

export function outcomeConflict(
  taskId: string,
  type: string,
  winner: string,
  deliveryId: string | undefined,
) {
  return new JobhookError(
    'outcome_conflict',
    `A ${type} event for the task ${JSON.stringify(taskId)} was not run: its ${winner} was handled first, ` +
      'and a job has one outcome. It was answered 2xx, so that the sender stops; if it came from the gateway, ' +
      'the type may be read from a header the signature does not cover.',
    { deliveryId, eventType: type },
  );
}
