import type { ConnectionOptions, WorkerOptions } from 'bullmq';
import { checkOption, optionNames, refuseUnknownOptions } from '../common/option-checks.js';
import { ownHandoffOf, type QueuedJobRunner } from '../handoff/handoff.js';
import { JobhookError } from '../common/errors.js';
import { differentFromHandoff, noQueue } from '../handoff/worker.js';
import type { BullmqHandoff } from './handoff.js';
import { startWorker, workerSettings, type QueuePlace, type WorkerHandle } from './worker.js';

/** Options of {@link runWorker}. @deprecated Use `receiver.work(options)` ({@link WorkOptions}). */
export interface RunWorkerOptions {
  /** Where the queue lives: ioredis options or a client; needed without `handoff`. */
  connection?: ConnectionOptions;
  /** The queue's name, as given to the `Queue` of `bullmqHandoff`. Default: the hand-off's, or `jobhook`. */
  queueName?: string;
  concurrency?: number;
  workerOptions?: Omit<WorkerOptions, 'connection' | 'concurrency' | 'autorun'>;
  /** The worker's own errors, not the handlers'. Default: `console.error`. */
  onWorkerError?: (error: Error) => void;
  /** The hand-off whose queue the worker consumes (a different `queueName` or prefix is refused). */
  handoff?: BullmqHandoff;
}

const RUN_WORKER_OPTIONS = optionNames<RunWorkerOptions>()([
  'connection',
  'queueName',
  'concurrency',
  'workerOptions',
  'onWorkerError',
  'handoff',
]);

/** Runs the handlers of the jobs `bullmqHandoff` queued. @deprecated Use `receiver.work(options)`. */
export async function runWorker(receiver: QueuedJobRunner, options: RunWorkerOptions): Promise<WorkerHandle> {
  const where = 'runWorker';
  refuseUnknownOptions(options, RUN_WORKER_OPTIONS, where);
  const { connection, queueName, workerOptions, handoff: given, ...rest } = options ?? {};
  const { prefix, ...otherWorkerOptions } = workerOptions ?? {};
  const work = { ...rest, ...(workerOptions && { workerOptions: otherWorkerOptions }) };
  const settings = workerSettings(where, receiver, work);
  const handoff = given ?? receiversBullmqHandoff(where, receiver);
  if (handoff !== undefined) {
    const valid = typeof handoff?.work === 'function' && typeof handoff.queueName === 'string';
    checkOption(where, 'handoff', handoff, valid, 'the bullmqHandoff the receiver hands off to');
    if (queueName !== undefined && queueName !== handoff.queueName) {
      throw differentFromHandoff(where, 'queueName', queueName, 'queue', handoff.queueName);
    }
    if (prefix !== undefined && prefix !== handoff.prefix) {
      throw differentFromHandoff(where, 'workerOptions.prefix', prefix, "queue's prefix", handoff.prefix);
    }
    return handoff.work(receiver, work);
  }
  checkOption(
    where,
    'connection',
    connection,
    typeof connection === 'object' && connection !== null,
    'where Redis is, e.g. { host: "127.0.0.1", port: 6379 }',
  );
  const place: QueuePlace = {
    name: queueName ?? 'jobhook',
    prefix: prefix ?? 'bull',
    connection: connection!,
  };
  if (queueName === undefined) await refuseUnmadeQueue(where, place);
  return startWorker(place, settings);
}

/**
 * The receiver's own hand-off when it is BullMQ's, so that the worker consumes the queue the
 * receiver writes to; a receiver that hands off to another engine is refused.
 */
function receiversBullmqHandoff(where: string, receiver: QueuedJobRunner): BullmqHandoff | undefined {
  const own = ownHandoffOf(receiver);
  if (own === undefined) return undefined;
  if (typeof (own as Partial<BullmqHandoff>).queueName === 'string') return own as BullmqHandoff;
  throw new JobhookError(
    'invalid_options',
    `${where}: the receiver hands off to another engine than BullMQ; start its worker with receiver.work().`,
  );
}

/** Refuses a queue no `Queue` was ever made with (a Queue writes its meta hash when it connects). */
async function refuseUnmadeQueue(where: string, place: QueuePlace): Promise<void> {
  const { Queue } = await import('bullmq');
  const queue = new Queue(place.name, {
    connection: place.connection,
    prefix: place.prefix,
    skipMetasUpdate: true,
  });
  queue.on('error', () => undefined);
  try {
    if (typeof queue.getMeta !== 'function') return;
    const meta = await queue.getMeta();
    if (meta.version === undefined && meta.maxLenEvents === undefined) {
      throw noQueue(
        where,
        'BullMQ queue',
        place.name,
        ` under the prefix ${JSON.stringify(place.prefix)} (no Queue was ever made with that name: the hand-off's has another?)`,
      );
    }
  } finally {
    await queue.close();
  }
}
