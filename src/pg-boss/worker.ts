import type PgBoss from 'pg-boss';
import { sleep } from '../common/backoff.js';
import { checkOption, optionNames, positiveInteger, refuseUnknownOptions } from '../common/option-checks.js';
import type {
  HandoffJob,
  QueuedJobRunner,
  WorkerHandle as AnyWorkerHandle,
  WorkOptions as AnyWorkOptions,
} from '../handoff/handoff.js';
import { checkReceiver, workerErrorReporter } from '../handoff/worker.js';
import { completionBatcher, failJob } from './settle.js';

/** Options of a pg-boss hand-off's worker (`handoff.work(receiver, options)`). */
export interface WorkOptions extends AnyWorkOptions {
  /** Jobs this worker runs at once. Default 8. */
  concurrency?: number;
  /** How often an idle worker asks PostgreSQL for a job, in seconds (at least 0.5). Default 2. */
  pollingIntervalSeconds?: number;
  /** The worker's own errors (an outcome not stored in time), not the handlers'. Default: `console.error`. */
  onWorkerError?: (error: Error) => void;
}

/** A running pg-boss worker: what `handoff.work()` resolves to. */
export interface WorkerHandle extends AnyWorkerHandle {
  /** Stops taking jobs and resolves once the jobs it runs have finished and their outcomes are stored. */
  close(): Promise<void>;
}

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

/** Gives each job of the queue at `place` to `receiver.handleQueued`, fetching one per free slot. */
export async function startWorker(place: QueuePlace, settings: WorkerSettings): Promise<WorkerHandle> {
  const { boss, queue } = place;
  const { receiver, concurrency, pollingSeconds, onWorkerError } = settings;
  await place.ensureQueue();

  const complete = completionBatcher(boss, queue, onWorkerError);
  let closing = false;
  /** Jobs taken and not yet settled: a job holds its slot until its outcome is stored. */
  let taken = 0;
  const settling = new Set<Promise<void>>();
  let wakeUp: AbortController | undefined;
  let waitingForSlot = false;
  const wake = () => wakeUp?.abort();
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
    // From when this process got the job: only a bound on how long to try storing the outcome.
    const ran = { id: job.id, expiresAt: Date.now() + Number(job.expireInSeconds) * 1000 };
    try {
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
      if (waitingForSlot) wake();
    });
    settling.add(settled);
  }

  // A fetch that came back full asks again once a slot frees; a short one pauses for the interval.
  async function fetchLoop(): Promise<void> {
    while (!closing) {
      const free = concurrency - taken;
      if (free === 0) {
        await pause(undefined);
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
