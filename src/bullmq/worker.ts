import { workerErrorReporter, checkReceiver } from '../handoff/worker.js';
import { JobhookError } from '../common/errors.js';
import { optionNames, positiveInteger, refuseUnknownOptions } from '../common/option-checks.js';
import type { ConnectionOptions, Job, Worker, WorkerOptions } from 'bullmq';
import type {
  HandoffJob,
  QueuedJobRunner,
  WorkerHandle as AnyWorkerHandle,
  WorkOptions as AnyWorkOptions,
} from '../handoff/handoff.js';

/** Options of a BullMQ hand-off's worker (`handoff.work(receiver, options)`). */
export interface WorkOptions extends AnyWorkOptions {
  /** Jobs this worker runs at once. Default 8. */
  concurrency?: number;
  /** BullMQ's worker options (`limiter`, ...) over ours: `lockDuration` 30 s, `stalledInterval` 5 s. */
  workerOptions?: Omit<WorkerOptions, 'connection' | 'concurrency' | 'autorun' | 'prefix'>;
  /** The worker's own errors (a lost connection, a lock not renewed). Default: `console.error`. */
  onWorkerError?: (error: Error) => void;
}

/** A running BullMQ worker: what `handoff.work()` resolves to. */
export interface WorkerHandle extends AnyWorkerHandle {
  /** The BullMQ `Worker`, for its events (`completed`, `failed`, ...) and its other methods. */
  readonly worker: Worker<HandoffJob>;
  /** Stops taking jobs and resolves once the jobs it runs have finished. */
  close(): Promise<void>;
}

/** Where a worker takes its jobs from: the hand-off's queue. */
export interface QueuePlace {
  name: string;
  prefix: string;
  connection: ConnectionOptions;
}

/**
 * A dead worker's job runs again within `lockDuration + 2 × stalledInterval` of the death (40 s;
 * BullMQ's own 30 s check made it 90 s): docs/handoff.md, "A worker that died".
 */
export const DEFAULT_WORKER_OPTIONS = {
  lockDuration: 30_000,
  stalledInterval: 5_000,
} as const satisfies Partial<WorkerOptions>;

const WORK_OPTIONS = optionNames<WorkOptions>()(['concurrency', 'workerOptions', 'onWorkerError']);

export interface WorkerSettings {
  receiver: QueuedJobRunner;
  concurrency: number;
  workerOptions: WorkOptions['workerOptions'];
  onWorkerError: (error: unknown) => void;
}

/** Checks a worker's options for `where` (before anything reaches Redis). */
export function workerSettings(
  where: string,
  receiver: QueuedJobRunner,
  options: WorkOptions | undefined,
): WorkerSettings {
  refuseUnknownOptions(options, WORK_OPTIONS, where);
  checkReceiver(where, receiver);
  return {
    receiver,
    concurrency: positiveInteger(where, 'concurrency', options?.concurrency, 8),
    workerOptions: options?.workerOptions,
    onWorkerError: workerErrorReporter(where, options?.onWorkerError),
  };
}

/** Gives each job of the queue at `place` to `receiver.handleQueued`; loads `bullmq` on first call. */
export async function startWorker(place: QueuePlace, settings: WorkerSettings): Promise<WorkerHandle> {
  const { receiver, concurrency, onWorkerError } = settings;
  const { Worker, UnrecoverableError } = await import('bullmq');
  const processJob = async (job: Job<HandoffJob>) => {
    try {
      await receiver.handleQueued(job.data, { attempt: attemptOf(job) });
    } catch (error) {
      if (error instanceof JobhookError && error.code === 'invalid_job') {
        throw new UnrecoverableError(error.message);
      }
      throw error;
    }
  };
  const worker = new Worker<HandoffJob>(place.name, processJob, {
    ...DEFAULT_WORKER_OPTIONS,
    ...settings.workerOptions,
    connection: place.connection,
    prefix: place.prefix,
    concurrency,
    autorun: true,
  });
  // A worker with no 'error' listener would crash the process on a lost connection.
  worker.on('error', onWorkerError);
  await worker.waitUntilReady();
  return { worker, close: () => worker.close() };
}

/** The attempt, from 1: `attemptsStarted` counts runs whose worker died too; `attemptsMade`, failures. */
export function attemptOf(job: Pick<Job, 'attemptsMade'> & { attemptsStarted?: number }): number {
  const failed = job.attemptsMade + 1;
  const started = job.attemptsStarted;
  return typeof started === 'number' && Number.isFinite(started) ? Math.max(started, failed) : failed;
}
