import {
  checkOption,
  invalidOption,
  MS_OR_NONE,
  nonNegativeNumber,
  optionNames,
  positiveInteger,
  refuseUnknownOptions,
} from '../common/option-checks.js';
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
import { startWorker, workerSettings, type WorkerHandle, type WorkOptions } from './worker.js';
import { differentFromHandoff } from '../handoff/worker.js';

/** What the hand-off uses of a BullMQ 5 or 6 `Queue`, typed here so the hand-off never loads bullmq. */
export interface BullmqQueue {
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
  /** How long an event's key stays deduplicated, in ms, even once its job is removed. Default 72 hours. */
  retentionMs?: number;
  /** BullMQ job options over the defaults (`attempts: 10`, exponential back-off from 2 s); `jobId` and `deduplication` are the hand-off's own. */
  jobOptions?: Omit<JobsOptions, 'jobId' | 'deduplication'>;
  /** Longest wait for Redis to store a job, in ms, before the delivery answers 503. Default 5,000; 0: none. */
  timeoutMs?: number;
}

/** The hand-off to BullMQ: its options, resolved, its failed events, and its worker. */
export interface BullmqHandoff extends Handoff<WorkOptions, WorkerHandle>, FailedEvents {
  readonly queueName: string;
  /** The queue's Redis key prefix (its `prefix` option, default `bull`). */
  readonly prefix: string;
  readonly retentionMs: number;
  /** Starts a worker on this hand-off's queue, with BullMQ's retries; resolves once connected (loads `bullmq`). */
  work(receiver: QueuedJobRunner, options?: WorkOptions): Promise<WorkerHandle>;
}

const HOUR = 60 * 60 * 1000;
const WHERE = 'bullmqHandoff';

/** The job options unless `jobOptions` says otherwise: ten tries over ~17 minutes, failed jobs kept. */
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

/** Verify, then enqueue to BullMQ (`handoff: bullmqHandoff({ queue })`): one job per dedupe key. */
export function bullmqHandoff(options: BullmqHandoffOptions): BullmqHandoff {
  refuseUnknownOptions(options, BULLMQ_HANDOFF_OPTIONS, 'bullmqHandoff');
  const queue = options?.queue;
  const valid = typeof queue?.add === 'function' && typeof queue.name === 'string';
  checkOption(WHERE, 'queue', queue, valid, "a BullMQ queue, e.g. new Queue('jobhook', { connection })");
  const retentionMs = positiveInteger(WHERE, 'retentionMs', options.retentionMs, 72 * HOUR, 'ms');
  const timeoutMs = nonNegativeNumber(WHERE, 'timeoutMs', options.timeoutMs, 5000, { unit: MS_OR_NONE });
  const jobOptions: JobsOptions = { ...DEFAULT_JOB_OPTIONS, ...options.jobOptions };

  // Read, not typed in BullmqQueue: a typed `opts` breaks inference of `new Queue(name)` on TypeScript 5.7.
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
      const jobs = await queueMethod(queue, 'getFailed')(0, limit - 1);
      return jobs.filter(Boolean).map(failedEventOf).reverse();
    },
    async retryFailed(id) {
      const job = await queueMethod(queue, 'getJob')(id);
      if (!job || !(await job.isFailed())) return false;
      try {
        await job.retry('failed');
        return true;
      } catch (error) {
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
    // The runs started, one whose worker died included: a retry by hand runs as the next.
    attempts: Math.max(job.attemptsMade, job.attemptsStarted ?? 0),
    failedAt: job.finishedOn,
  };
}

/** The BullMQ job id for a dedupe key: BullMQ refuses integers and `:`, so those (and `%`) are escaped. */
export function jobIdOf(key: string): string {
  const escaped = key.replace(/[%:]/g, (c) => (c === '%' ? '%25' : '%3A'));
  // `${parseInt(id, 10)}` === id is BullMQ's own integer test: escape the first character then.
  if (`${Number.parseInt(escaped, 10)}` === escaped) {
    return `%${escaped.charCodeAt(0).toString(16).toUpperCase().padStart(2, '0')}${escaped.slice(1)}`;
  }
  return escaped;
}
