import { workerErrorReporter } from '../handoff/worker-errors.js';
import { checkOption, optionNames, positiveInteger, refuseUnknownOptions } from '../common/options.js';
import { checkReceiver } from '../handoff/queued-receiver.js';
import type { ConnectionOptions, Job, Worker, WorkerOptions } from 'bullmq';
import { JobhookError } from '../common/errors.js';
import type { HandoffJob, QueuedJobRunner } from '../handoff/handoff.js';

/** Options of {@link runWorker}. */
export interface RunWorkerOptions {
  /** Where the queue lives: ioredis options (`{ host, port }`) or an ioredis client. */
  connection: ConnectionOptions;
  /** The queue's name, as given to the `Queue` of `bullmqHandoff`. Default `jobhook`. */
  queueName?: string;
  /** Jobs this worker runs at once. Default 8. */
  concurrency?: number;
  /** More BullMQ worker options (`prefix`, `lockDuration`, `limiter`, ...). */
  workerOptions?: Omit<WorkerOptions, 'connection' | 'concurrency' | 'autorun'>;
  /**
   * Receives the worker's own errors (Redis connection lost, a lock that could not be renewed),
   * not the handlers' failures, which go to the receiver's `onError`. Default: `console.error`.
   */
  onWorkerError?: (error: Error) => void;
}

/** A running worker: {@link runWorker}'s result. */
export interface WorkerHandle {
  /** The BullMQ `Worker`, for its events (`completed`, `failed`, ...) and its other methods. */
  readonly worker: Worker<HandoffJob>;
  /** Stops taking jobs and resolves once the jobs it runs have finished. */
  close(): Promise<void>;
}

const RUN_WORKER_OPTIONS = optionNames<RunWorkerOptions>()([
  'connection',
  'queueName',
  'concurrency',
  'workerOptions',
  'onWorkerError',
]);

/**
 * Runs the receiver's handlers for the jobs `bullmqHandoff` queued, in this process: each job's
 * event goes to `receiver.handleQueued`, with the receiver's handler time-out and `onError`
 * reporting, and, when the receiver has an `observer` (`jobhook/otel`), the time from hand-off to
 * the job's first start (`jobhook.handoff.latency`). A job whose handlers fail is retried by BullMQ with the job's backoff; after its last
 * attempt it stays in the failed set with its event, to be retried from there. A payload that no
 * longer matches the receiver's schemas fails at once, without retries (retrying cannot fix it;
 * the job waits in the failed set for a deploy that can).
 *
 * Resolves once the worker is connected. `bullmq` is loaded here, on the first call, so that
 * `jobhook/bullmq` itself loads without it.
 */
export async function runWorker(receiver: QueuedJobRunner, options: RunWorkerOptions): Promise<WorkerHandle> {
  refuseUnknownOptions(options, RUN_WORKER_OPTIONS, 'runWorker');
  checkReceiver('runWorker', receiver);
  const connection = options?.connection;
  checkOption(
    'runWorker',
    'connection',
    connection,
    typeof connection === 'object' && connection !== null,
    'where Redis is, e.g. { host: "127.0.0.1", port: 6379 }',
  );
  const concurrency = positiveInteger('runWorker', 'concurrency', options.concurrency, 8);
  const { Worker, UnrecoverableError } = await import('bullmq');
  const processJob = async (job: Job<HandoffJob>) => {
    try {
      // The first attempt tells the receiver's observer the time from hand-off to start;
      // attemptsMade survives job.retry(), so a failed event retried by hand counts on.
      await receiver.handleQueued(job.data, { attempt: job.attemptsMade + 1 });
    } catch (error) {
      if (error instanceof JobhookError && error.code === 'invalid_job') {
        throw new UnrecoverableError(error.message);
      }
      throw error;
    }
  };
  const worker = new Worker<HandoffJob>(options.queueName ?? 'jobhook', processJob, {
    ...options.workerOptions,
    connection: options.connection,
    concurrency,
    autorun: true,
  });
  // A worker with no 'error' listener would crash the process on a lost connection.
  const onWorkerError = workerErrorReporter('runWorker', options.onWorkerError);
  worker.on('error', onWorkerError);
  await worker.waitUntilReady();
  return { worker, close: () => worker.close() };
}
