import type PgBoss from 'pg-boss';
import { sleep } from '../common/backoff.js';
import { checkOption, optionNames, positiveInteger, refuseUnknownOptions } from '../common/errors.js';
import type {
  HandoffJob,
  QueuedJobRunner,
  WorkerHandle as AnyWorkerHandle,
  WorkOptions as AnyWorkOptions,
} from '../handoff/handoff.js';
import { checkReceiver, workerErrorReporter } from '../handoff/worker.js';
import { completionBatcher } from './completions.js';
import { failJob } from './settle.js';

/** Options of a pg-boss hand-off's worker (`handoff.work(receiver, options)`). */
export interface WorkOptions extends AnyWorkOptions {
  /** Jobs this worker runs at once. Default 8. */
  concurrency?: number;
  /** How often an idle worker asks PostgreSQL for a job, in seconds (at least 0.5). Default 2. */
  pollingIntervalSeconds?: number;
  /**
   * Receives the worker's own errors (a job's outcome that could not be stored before the job
   * expired), not the handlers' failures, which go to the receiver's `onError`. Default:
   * `console.error`.
   */
  onWorkerError?: (error: Error) => void;
}

/** A running pg-boss worker: what `handoff.work()` resolves to. */
export interface WorkerHandle extends AnyWorkerHandle {
  /** Stops taking jobs and resolves once the jobs it runs have finished and their outcomes are stored. */
  close(): Promise<void>;
}

/** A worker's options, checked and resolved. */
export interface WorkerSettings {
  receiver: QueuedJobRunner;
  concurrency: number;
  pollingSeconds: number;
  onWorkerError: (error: unknown) => void;
}

/** Where a worker takes its jobs from: the hand-off's boss (its schema) and queue. */
export interface QueuePlace {
  boss: PgBoss;
  queue: string;
  /** Creates the queue when missing (pg-boss 10 needs it before `fetch`). */
  ensureQueue: () => Promise<void>;
}

const WORK_OPTIONS = optionNames<WorkOptions>()(['concurrency', 'pollingIntervalSeconds', 'onWorkerError']);

/** Checks a worker's options for `where` (before anything reaches PostgreSQL). */
export function workerSettings(
  where: string,
  receiver: QueuedJobRunner,
  options: WorkOptions | undefined,
): WorkerSettings {
  refuseUnknownOptions(options, WORK_OPTIONS, where);
  checkReceiver(where, receiver);
  const concurrency = positiveInteger(where, 'concurrency', options?.concurrency, 8);
  const pollingSeconds = options?.pollingIntervalSeconds ?? 2;
  checkOption(
    where,
    'pollingIntervalSeconds',
    pollingSeconds,
    Number.isFinite(pollingSeconds) && pollingSeconds >= 0.5,
    'a number of seconds, 0.5 or more',
  );
  const onWorkerError = workerErrorReporter(where, options?.onWorkerError);
  return { receiver, concurrency, pollingSeconds, onWorkerError };
}

/**
 * Runs the receiver's handlers for the jobs of the queue at `place`, in this process: each job's
 * event goes to `receiver.handleQueued`, with `context.attempt` (pg-boss's retry count plus one)
 * and the receiver's handler time-out and `onError` reporting. A job whose handlers fail is retried
 * by pg-boss (the job's `retryLimit`, `retryDelay`, `retryBackoff`); after its last attempt it
 * stays in the `failed` state with its event and error, for `listFailed` and `retryFailed`. A job
 * whose worker died is retried once it expires (the job's `expireInSeconds`, default 15 minutes,
 * checked by pg-boss's supervision every `maintenanceIntervalSeconds`): keep it above the
 * receiver's `handlerTimeoutMs`.
 *
 * The worker takes jobs with `boss.fetch`, as many in one query as it has free slots, and stores
 * each outcome itself (`completeJobs`, `failJob`: the completions of jobs that finished together in
 * one statement), awaited and tried again when a connection is cut under it, rather than through
 * `boss.work`, which sends the completion once without waiting for it: a completion lost that way
 * made pg-boss run a job whose handlers had succeeded again, and its unhandled rejection ended the
 * worker's process.
 */
export async function startWorker(place: QueuePlace, settings: WorkerSettings): Promise<WorkerHandle> {
  const { boss, queue } = place;
  const { receiver, concurrency, pollingSeconds, onWorkerError } = settings;
  await place.ensureQueue();

  const complete = completionBatcher(boss, queue, onWorkerError);
  let closing = false;
  /** Jobs taken and not yet settled: a job holds its slot until its outcome is stored. */
  let taken = 0;
  const settling = new Set<Promise<void>>();
  /** Ends the fetch loop's pause (`close`), or its wait for a free slot (a job settled, or `close`). */
  let wakeUp: AbortController | undefined;
  let waitingForSlot = false;
  const wake = () => wakeUp?.abort();
  /** Waits `ms` (the polling pause), or for a free slot (`undefined`), until then or `wake()`. */
  async function pause(ms: number | undefined): Promise<void> {
    const { signal } = (wakeUp = new AbortController());
    waitingForSlot = ms === undefined;
    try {
      if (ms !== undefined) await sleep(ms, signal);
      else await new Promise((resolve) => signal.addEventListener('abort', resolve, { once: true }));
    } catch {
      // Woken before the pause ended.
    } finally {
      wakeUp = undefined;
      waitingForSlot = false;
    }
  }

  async function run(job: PgBoss.JobWithMetadata<HandoffJob>): Promise<void> {
    // Counted from when this process got the job, a little after PostgreSQL started it: the
    // expiry is only a bound on how long to keep trying to store the outcome.
    const ran = { id: job.id, expiresAt: Date.now() + Number(job.expireInSeconds) * 1000 };
    try {
      // The first attempt tells the receiver's observer the time from hand-off to start.
      await receiver.handleQueued(job.data, { attempt: job.retryCount + 1 });
    } catch (error) {
      return failJob(boss, queue, ran, error, onWorkerError);
    }
    return complete(ran);
  }

  function start(job: PgBoss.JobWithMetadata<HandoffJob>) {
    taken++;
    const settled: Promise<void> = run(job).finally(() => {
      taken--;
      settling.delete(settled);
      // Not during the polling pause: the queue was empty then, a free slot does not change that.
      if (waitingForSlot) wake();
    });
    settling.add(settled);
  }

  // One loop asks for as many jobs as there are free slots, in one query. A fetch that came back
  // full means more may be waiting: the loop asks again as soon as a slot frees. One that came
  // back short found the queue empty (or PostgreSQL out of reach: pg-boss then answers []), so the
  // loop pauses for the polling interval.
  async function fetchLoop(): Promise<void> {
    while (!closing) {
      const free = concurrency - taken;
      if (free === 0) {
        await pause(undefined);
        // One turn of the event loop, so that the slots freed together are fetched for together.
        await new Promise((resolve) => setImmediate(resolve));
        continue;
      }
      let jobs: PgBoss.JobWithMetadata<HandoffJob>[] = [];
      try {
        jobs = await boss.fetch<HandoffJob>(queue, { batchSize: free, includeMetadata: true });
      } catch (error) {
        onWorkerError(error);
      }
      // PostgreSQL made them active for this worker: they run even when close() came meanwhile.
      for (const job of jobs) start(job);
      if (jobs.length < free && !closing) await pause(pollingSeconds * 1000);
    }
  }

  const fetching = fetchLoop();
  return {
    async close() {
      closing = true;
      wake();
      await fetching;
      await Promise.all([...settling]);
    },
  };
}
