import {
  checkOption,
  invalidOption,
  MS_OR_NONE,
  nonNegativeNumber,
  optionNames,
  positiveInteger,
  refuseUnknownOptions,
} from '../common/errors.js';
import type { ConnectionOptions, Job, JobsOptions } from 'bullmq';
import {
  failedLimit,
  type FailedEvent,
  type FailedEvents,
  type Handoff,
  type HandoffJob,
  type QueuedJobRunner,
} from '../handoff/handoff.js';
import { bounded } from '../common/deadline.js';
import { jobIdOf } from './job-id.js';
import { startWorker, workerSettings, type WorkerHandle, type WorkOptions } from './worker.js';
import { differentFromHandoff } from '../handoff/worker.js';

/**
 * The part of a BullMQ `Queue` the hand-off uses. Typed here rather than imported, so that any
 * BullMQ 5 or 6 queue fits and `jobhook/bullmq` never loads bullmq for the hand-off. Its worker
 * also takes the queue's `opts.connection` and `opts.prefix`.
 */
export interface BullmqQueue {
  /** The queue's name: the hand-off's worker consumes it. */
  readonly name: string;
  /** `queue.add(name, data, opts)`. */
  add(name: string, data: HandoffJob, opts?: JobsOptions): Promise<unknown>;
  /** `queue.getFailed(start, end)`, for `listFailed`. */
  getFailed?(start?: number, end?: number): Promise<Job<HandoffJob>[]>;
  /** `queue.getJob(id)`, for `retryFailed`. */
  getJob?(id: string): Promise<Job<HandoffJob> | undefined>;
}

/** Options of {@link bullmqHandoff}. */
export interface BullmqHandoffOptions {
  /** A BullMQ queue: `new Queue('jobhook', { connection })`. The hand-off never closes it. */
  queue: BullmqQueue;
  /**
   * How long an event's key stays deduplicated after it was first queued, in ms, even once its
   * job is removed from Redis (BullMQ's `deduplication.ttl`). Default 72 hours: longer than the
   * gateway's retry window. Past it, a delivery of the same event is queued again.
   */
  retentionMs?: number;
  /**
   * BullMQ job options, over the defaults: `attempts: 10`, `backoff: { type: 'exponential',
   * delay: 2000, jitter: 0.5 }` (retries over about 17 minutes), `removeOnComplete: { age: 86400,
   * count: 10000 }`, `removeOnFail: false` (a job that keeps failing stays in the failed set with
   * its event, to retry from there). `jobId` and `deduplication` are the hand-off's own.
   */
  jobOptions?: Omit<JobsOptions, 'jobId' | 'deduplication'>;
  /**
   * Longest wait for Redis to store a job, in ms, before the delivery answers 503 and the sender
   * retries (a job stored late is then found by its key). Default 5,000; 0 for no limit.
   */
  timeoutMs?: number;
}

/** The hand-off to BullMQ: its options, resolved, its failed events, and its worker. */
export interface BullmqHandoff extends Handoff<WorkOptions, WorkerHandle>, FailedEvents {
  /** The name of the queue jobs go to. */
  readonly queueName: string;
  /** The queue's Redis key prefix (its `prefix` option, default `bull`). */
  readonly prefix: string;
  /** How long a key stays deduplicated, in ms. */
  readonly retentionMs: number;
  /**
   * Starts a worker in this process on this hand-off's queue (its name, connection and prefix):
   * each job's event goes to `receiver.handleQueued`, with BullMQ's retries; a job whose handlers
   * keep failing stays in the failed set with its event, and a payload that no longer matches the
   * receiver's schemas fails at once. Resolves once the worker is connected; loads `bullmq`.
   */
  work(receiver: QueuedJobRunner, options?: WorkOptions): Promise<WorkerHandle>;
}

const HOUR = 60 * 60 * 1000;
const WHERE = 'bullmqHandoff';

/** The job options the hand-off uses unless `jobOptions` says otherwise. */
export const DEFAULT_JOB_OPTIONS = {
  attempts: 10,
  backoff: { type: 'exponential', delay: 2000, jitter: 0.5 },
  removeOnComplete: { age: 24 * 60 * 60, count: 10_000 },
  removeOnFail: false,
} as const satisfies JobsOptions;

const BULLMQ_HANDOFF_OPTIONS = optionNames<BullmqHandoffOptions>()([
  'queue',
  'retentionMs',
  'jobOptions',
  'timeoutMs',
]);

/**
 * Verify, then enqueue: passed as `createReceiver({ secret, handoff: bullmqHandoff({ queue }) })`,
 * the receiver answers 2xx once the verified, validated event is a job in the queue, and the
 * worker that `receiver.work()` (`handoff.work(receiver)`) starts runs the receiver's handlers for
 * it with BullMQ's retries.
 *
 * The job id is the event's dedupe key, and the key is also BullMQ's deduplication id for
 * `retentionMs`: the same event delivered twice, retried, or sent to two webhooks during a
 * rotation is one job, from any number of receivers, also after the job was removed. Both checks
 * run inside BullMQ's one Lua script that adds the job, so two receivers adding the same event at
 * once still make one job.
 *
 * Durable means what Redis makes of it: run Redis with `appendonly yes` (`appendfsync always` to
 * survive a crash of the Redis machine without losing the last second) and
 * `maxmemory-policy noeviction`, as BullMQ asks.
 */
export function bullmqHandoff(options: BullmqHandoffOptions): BullmqHandoff {
  refuseUnknownOptions(options, BULLMQ_HANDOFF_OPTIONS, 'bullmqHandoff');
  const queue = options?.queue;
  const valid = typeof queue?.add === 'function' && typeof queue.name === 'string';
  checkOption(WHERE, 'queue', queue, valid, "a BullMQ queue, e.g. new Queue('jobhook', { connection })");
  const retentionMs = positiveInteger(WHERE, 'retentionMs', options.retentionMs, 72 * HOUR, 'ms');
  const timeoutMs = nonNegativeNumber(WHERE, 'timeoutMs', options.timeoutMs, 5000, { unit: MS_OR_NONE });
  const jobOptions: JobsOptions = { ...DEFAULT_JOB_OPTIONS, ...options.jobOptions };

  // Read, not typed in BullmqQueue: a typed `opts` steers the inference of `new Queue(name)`'s
  // connection type where the queue is passed, which TypeScript 5.7 then refuses without options.
  const opts = (queue as { opts?: { connection?: ConnectionOptions; prefix?: string } }).opts;
  const prefix = opts?.prefix ?? 'bull';

  return {
    queueName: queue.name,
    prefix,
    retentionMs,
    async enqueue(job) {
      const keyed: JobsOptions =
        job.key === undefined
          ? jobOptions
          : { ...jobOptions, jobId: jobIdOf(job.key), deduplication: { id: job.key, ttl: retentionMs } };
      await bounded(
        queue.add(job.type, job, keyed),
        timeoutMs,
        'handoff_failed',
        'The event could not be queued',
      );
    },
    async listFailed(listOptions) {
      const limit = failedLimit(listOptions, 'bullmqHandoff.listFailed');
      // BullMQ lists the failed set newest first.
      const jobs = await queueMethod(queue, 'getFailed')(0, limit - 1);
      return jobs.filter(Boolean).map(failedEventOf).reverse();
    },
    async retryFailed(id) {
      const job = await queueMethod(queue, 'getJob')(id);
      if (!job || !(await job.isFailed())) return false;
      try {
        // attemptsMade is kept: the handlers' `context.attempt` counts on.
        await job.retry('failed');
        return true;
      } catch (error) {
        // Another caller retried it between the check and here: it runs once.
        if (!(await job.isFailed())) return false;
        throw error;
      }
    },
    async work(receiver, workOptions) {
      const where = 'bullmqHandoff.work';
      const settings = workerSettings(where, receiver, workOptions);
      // A prefix in workerOptions (JavaScript) would move the worker off the hand-off's queue.
      const given = (workOptions?.workerOptions as { prefix?: unknown } | undefined)?.prefix;
      if (typeof given === 'string' && given !== prefix) {
        throw differentFromHandoff(where, 'workerOptions.prefix', given, "queue's prefix", prefix);
      }
      const connection = opts?.connection;
      const shared = typeof connection === 'object' && connection !== null;
      checkOption(
        where,
        'queue',
        queue,
        shared,
        'a BullMQ Queue made with its connection, for the worker to share',
      );
      return startWorker({ name: queue.name, prefix, connection: connection! }, settings);
    },
  };
}

function queueMethod<M extends 'getFailed' | 'getJob'>(queue: BullmqQueue, name: M) {
  const method = queue[name];
  if (typeof method !== 'function') {
    throw invalidOption(WHERE, 'queue', `a BullMQ Queue, with ${name}()`, queue);
  }
  return method.bind(queue) as NonNullable<BullmqQueue[M]>;
}

function failedEventOf(job: Job<HandoffJob>): FailedEvent {
  const data: Partial<HandoffJob> = job.data ?? {};
  return {
    id: String(job.id),
    key: data.key,
    type: data.type ?? job.name,
    deliveryId: data.deliveryId ?? undefined,
    payload: data.payload,
    error: job.failedReason ?? '',
    attempts: job.attemptsMade,
    failedAt: job.finishedOn,
  };
}
