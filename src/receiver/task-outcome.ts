import { JobhookError } from '../common/errors.js';
import type { DedupeStore } from '../dedupe/dedupe-store.js';
import { scopedKey } from '../results/job-result.js';
import { STORE_FAILED, type Claim, type ClaimFor, type DeliveryClaims } from './claims.js';

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

/** The task's marks for one job outcome event of `type` (`undefined`: not a job outcome, nothing to gate). */
export async function gateOutcome(
  claims: DeliveryClaims,
  store: DedupeStore,
  event: { type: string; taskId: string | undefined; tenant: string | undefined; delivery: ClaimFor },
): Promise<OutcomeGate | undefined> {
  const { type, taskId, tenant, delivery } = event;
  if (taskId === undefined || !(OUTCOMES as readonly string[]).includes(type)) return undefined;
  const held: Claim[] = [];
  const found: Record<string, unknown> = {};
  for (const outcome of OUTCOMES) {
    const taken = await claims.take(store, scopedKey(tenant, `outcome:${taskId}:${outcome}`), delivery);
    if (typeof taken === 'object') held.push(taken);
    found[outcome] = taken;
  }
  const other = OUTCOMES.find((outcome) => outcome !== type)!;
  const verdict: OutcomeGate =
    found[other] === 'done'
      ? { run: false, answer: 'conflict', winner: other }
      : found[type] === STORE_FAILED || found[other] === STORE_FAILED
        ? { run: false, answer: STORE_FAILED }
        : found[type] === 'busy' || found[other] === 'busy'
          ? { run: false, answer: 'busy' }
          : { run: true, marks: held };
  if (!verdict.run) await settleMarks(claims, held, type, false, delivery);
  return verdict;
}

/** Settles the marks: with `ok`, the event's own outcome is marked handled; the other is freed. */
export async function settleMarks(
  claims: DeliveryClaims,
  marks: readonly Claim[],
  type: string,
  ok: boolean,
  delivery: ClaimFor,
): Promise<void> {
  for (const mark of marks) {
    await claims.completeOrRelease(mark, ok && mark.key.endsWith(`:${type}`), delivery);
  }
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
