import { setTimeout as sleep } from 'node:timers/promises';
import type PgBoss from 'pg-boss';

/** Pauses between tries at storing a job's outcome, in ms (the last repeats). */
export const SETTLE_BACKOFF_MS: readonly number[] = [50, 100, 200, 400, 800, 1600, 2000];

/** One job a worker ran, as it needs it to store the outcome. */
export interface RanJob {
  id: string;
  /** When the job expires (ms since the epoch, this process's clock): pg-boss then retries it. */
  expiresAt: number;
}

/**
 * Stores a job's outcome: `complete` after its handlers succeeded, `fail` (with the error, kept in
 * the job's `output`) after they failed. pg-boss's own worker (`boss.work`) sends the completion
 * once, without waiting for it: when a connection is cut under it, the job stays `active` until it
 * expires and pg-boss runs it again, although its handlers succeeded, and the rejection is not
 * handled (it ends a Node process by default). Here each outcome is awaited and tried again, on
 * whatever connection the pool gives next, until PostgreSQL answers or the job has expired.
 *
 * A completion is tried at least once even past the expiry: it lands while the job is still
 * `active` (pg-boss's supervision fails expired jobs only every `maintenanceIntervalSeconds`), and
 * it only touches an `active` job. A failure is not stored past the expiry: the job may be running
 * again on another worker by then, and `fail` would fail that attempt too (pg-boss fails the
 * expired job itself, as timed out).
 *
 * Resolves with whether the outcome was stored; never rejects.
 */
export async function settleJob(
  boss: PgBoss,
  queue: string,
  job: RanJob,
  outcome: { ok: true } | { ok: false; error: unknown },
  onError: (error: Error) => void,
): Promise<boolean> {
  const store = outcome.ok
    ? () => boss.complete(queue, job.id)
    : () => boss.fail(queue, job.id, errorOutput(outcome.error));
  let last: unknown;
  for (let tries = 0; ; tries++) {
    if (Date.now() >= job.expiresAt && (tries > 0 || !outcome.ok)) break;
    try {
      await store();
      return true;
    } catch (error) {
      last = error;
    }
    const pause = SETTLE_BACKOFF_MS[Math.min(tries, SETTLE_BACKOFF_MS.length - 1)]!;
    await sleep(Math.max(0, Math.min(pause, job.expiresAt - Date.now())));
  }
  const what = outcome.ok ? 'its completion' : 'its failure';
  const why = last instanceof Error ? `: ${last.message}` : '';
  onError(
    new Error(
      `pg-boss job ${job.id}: ${what} could not be stored before the job expired${why}; pg-boss will run it again.`,
    ),
  );
  return false;
}

/** What `fail` keeps in the job's `output`: an Error as pg-boss's own worker keeps it, anything else as a message. */
function errorOutput(error: unknown): object {
  if (error instanceof Error) return error;
  return { message: String(error) };
}
