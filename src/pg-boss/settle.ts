import type PgBoss from 'pg-boss';
import { backoffDelay, sleep, type Backoff } from '../common/backoff.js';

/** Pauses between tries at storing a job's outcome: 50 ms doubling to 2 s. */
export const SETTLE_BACKOFF: Backoff = { firstMs: 50, maxMs: 2000 };

/** One job a worker ran, as it needs it to store the outcome. */
export interface RanJob {
  id: string;
  /** When the job expires (ms since the epoch, this process's clock): pg-boss then retries it. */
  expiresAt: number;
}

/*
 * Why the outcomes are stored here: pg-boss's own worker (`boss.work`) sends the completion once,
 * without waiting for it. When a connection is cut under it, the job stays `active` until it
 * expires and pg-boss runs it again, although its handlers succeeded, and the rejection is not
 * handled (it ends a Node process by default). Here each outcome is awaited and tried again, on
 * whatever connection the pool gives next, until PostgreSQL answers or the job has expired.
 */

/**
 * Stores the completion of jobs whose handlers succeeded, all in one `complete` (one statement,
 * which only touches jobs still `active`: a completion that landed before a cut is not repeated).
 *
 * A completion is tried at least once even past the job's expiry: it lands while the job is still
 * `active` (pg-boss's supervision fails expired jobs only every `maintenanceIntervalSeconds`).
 * After a failed try, the next one carries only the jobs that have not expired yet; each job left
 * out is reported to `onError`. Never rejects.
 */
export async function completeJobs(
  boss: PgBoss,
  queue: string,
  jobs: readonly RanJob[],
  onError: (error: Error) => void,
): Promise<void> {
  const { lost, error } = await untilExpired(jobs, true, (ids) => boss.complete(queue, ids));
  for (const job of lost) onError(notStored(job, 'its completion', error));
}

/**
 * Stores a failed attempt (with the error, kept in the job's `output`), tried again like a
 * completion. It is not stored past the job's expiry: the job may be running again on another
 * worker by then, and `fail` would fail that attempt too (pg-boss fails the expired job itself,
 * as timed out). Never rejects.
 */
export async function failJob(
  boss: PgBoss,
  queue: string,
  job: RanJob,
  failure: unknown,
  onError: (error: Error) => void,
): Promise<void> {
  const output = errorOutput(failure);
  const { lost, error } = await untilExpired([job], false, (ids) => boss.fail(queue, ids, output));
  for (const each of lost) onError(notStored(each, 'its failure', error));
}

/**
 * Calls `store` with the ids of the jobs not expired yet (of all of them on the first try when
 * `firstTryPastExpiry`) until it resolves or every job has expired, pausing `SETTLE_BACKOFF`
 * between tries; answers the jobs given up on and the last error.
 */
async function untilExpired(
  jobs: readonly RanJob[],
  firstTryPastExpiry: boolean,
  store: (ids: string[]) => Promise<unknown>,
): Promise<{ lost: RanJob[]; error: unknown }> {
  const lost: RanJob[] = [];
  let left = [...jobs];
  let error: unknown;
  for (let tries = 0; ; tries++) {
    if (tries > 0 || !firstTryPastExpiry) {
      const now = Date.now();
      lost.push(...left.filter((job) => now >= job.expiresAt));
      left = left.filter((job) => now < job.expiresAt);
    }
    if (left.length === 0) return { lost, error };
    try {
      await store(left.map((job) => job.id));
      // The last failure is still why the jobs left out were not stored.
      return { lost, error };
    } catch (caught) {
      error = caught;
    }
    const pause = backoffDelay(SETTLE_BACKOFF, tries + 1);
    const latest = Math.max(...left.map((job) => job.expiresAt));
    await sleep(Math.max(0, Math.min(pause, latest - Date.now())));
  }
}

function notStored(job: RanJob, what: string, last: unknown): Error {
  const why = last instanceof Error ? `: ${last.message}` : '';
  return new Error(
    `pg-boss job ${job.id}: ${what} could not be stored before the job expired${why}; pg-boss will run it again.`,
  );
}

/** What `fail` keeps in the job's `output`: an Error as pg-boss's own worker keeps it, anything else as a message. */
function errorOutput(error: unknown): object {
  if (error instanceof Error) return error;
  return { message: String(error) };
}
