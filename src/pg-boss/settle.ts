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

// Outcomes are stored here, tried until the job expires: `boss.work` sends a completion once, unawaited.

/** Stores jobs' completion in one `complete`, tried until they expire (once even past). Never rejects. */
export async function completeJobs(
  boss: PgBoss,
  queue: string,
  jobs: readonly RanJob[],
  onError: (error: Error) => void,
): Promise<void> {
  const { lost, error } = await untilExpired(jobs, true, (ids) => boss.complete(queue, ids));
  for (const job of lost) onError(notStored(job, 'its completion', error));
}

/** Stores a failed attempt, tried again until the job expires (it may then run elsewhere). Never rejects. */
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

/** Calls `store` with the jobs not expired yet until it resolves; answers those given up on and why. */
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

function errorOutput(error: unknown): object {
  if (error instanceof Error) return error;
  return { message: String(error) };
}

/** Completes a worker's jobs in batches, one `boss.complete` at a time. Never rejects. */
export function completionBatcher(
  boss: PgBoss,
  queue: string,
  onError: (error: Error) => void,
): (job: RanJob) => Promise<void> {
  let waiting: { job: RanJob; stored: () => void }[] = [];
  let sending = false;
  async function send() {
    try {
      while (waiting.length > 0) {
        const batch = waiting;
        waiting = [];
        await completeJobs(
          boss,
          queue,
          batch.map((entry) => entry.job),
          onError,
        );
        for (const entry of batch) entry.stored();
      }
    } finally {
      sending = false;
    }
  }
  return (job) =>
    new Promise<void>((stored) => {
      waiting.push({ job, stored });
      if (sending) return;
      sending = true;
      // A turn of the event loop first, so the jobs finishing in this one join the batch.
      setImmediate(() => void send());
    });
}
