import type PgBoss from 'pg-boss';
import { completeJobs, type RanJob } from './settle.js';

/**
 * Groups the completions of a worker's jobs: the jobs that finish together are completed in one
 * `boss.complete` (one statement for the batch rather than one per job), and those that finish
 * while it is under way go in the next. One batch is sent at a time, so under load each round trip
 * carries every job that finished during the previous one. The function answers once the job's
 * completion is stored or given up on (`completeJobs`, which reports it); it never rejects.
 */
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
      // A turn of the event loop first, so that the jobs finishing in this one join the batch.
      setImmediate(() => void send());
    });
}
