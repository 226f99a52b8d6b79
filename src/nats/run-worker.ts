import type { JetStreamClient } from '@nats-io/jetstream';
import { checkOption, nameMatching, optionNames, refuseUnknownOptions } from '../common/errors.js';
import type { QueuedJobRunner } from '../handoff/handoff.js';
import { differentFromHandoff, noQueue } from '../handoff/worker.js';
import type { NatsHandoff } from './handoff.js';
import { existingStream, NATS_NAME, natsPlace } from './stream.js';
import { startWorker, workerSettings, type WorkerHandle } from './worker.js';

/**
 * Options of {@link runNatsWorker}.
 *
 * @deprecated Start the worker with `receiver.work(options)` (`handoff.work(receiver, options)`),
 * whose options are {@link WorkOptions}: it takes the client, stream, subject and consumer from
 * the hand-off.
 */
export interface RunNatsWorkerOptions {
  /** A JetStream client, needed without `handoff`; the worker never closes it. */
  js?: JetStreamClient;
  /** The stream, as given to `natsHandoff`. Default: the hand-off's, or `JOBHOOK`. */
  stream?: string;
  /** The subject, as given to `natsHandoff`. Default: the hand-off's, or `jobhook.events`. */
  subject?: string;
  /** The durable consumer every worker shares (created when missing). Default: the hand-off's, or `jobhook-workers`. */
  consumer?: string;
  /** Attempts at an event before it is kept as failed. Default 10. */
  attempts?: number;
  /** The pause before each retry of a failed attempt, in ms, by attempt (the last value repeats). */
  backoffMs?: readonly number[];
  /** The consumer's `ack_wait`, in ms. Default 30,000. */
  ackWaitMs?: number;
  /** Events this worker runs at once. Default 8. */
  concurrency?: number;
  /** The worker's own errors (connection lost, a failed record not stored). Default `console.error`. */
  onWorkerError?: (error: Error) => void;
  /** The hand-off whose stream the worker consumes (another `stream`, `subject` or `consumer` is refused). */
  handoff?: NatsHandoff;
}

/**
 * A running JetStream worker.
 *
 * @deprecated Use {@link WorkerHandle}, the same on every engine.
 */
export type NatsWorkerHandle = WorkerHandle;

const RUN_NATS_WORKER_OPTIONS = optionNames<RunNatsWorkerOptions>()([
  'js',
  'stream',
  'subject',
  'consumer',
  'attempts',
  'backoffMs',
  'ackWaitMs',
  'concurrency',
  'onWorkerError',
  'handoff',
]);

/**
 * Runs the receiver's handlers for the events `natsHandoff` published, in this process.
 *
 * @deprecated Use `receiver.work(options)` (`handoff.work(receiver, options)`), on the hand-off's own stream.
 */
export async function runNatsWorker(
  receiver: QueuedJobRunner,
  options: RunNatsWorkerOptions,
): Promise<WorkerHandle> {
  const where = 'runNatsWorker';
  refuseUnknownOptions(options, RUN_NATS_WORKER_OPTIONS, where);
  const { js, stream, subject, consumer, handoff, ...work } = options ?? {};
  const settings = workerSettings(where, receiver, work);
  if (handoff !== undefined) {
    const valid = typeof handoff?.work === 'function' && typeof handoff.stream === 'string';
    checkOption(where, 'handoff', handoff, valid, 'the natsHandoff the receiver hands off to');
    const names = { stream, subject, consumer };
    for (const name of ['stream', 'subject', 'consumer'] as const) {
      const given = names[name];
      if (given !== undefined && given !== handoff[name]) {
        throw differentFromHandoff(where, name, given, name, handoff[name]);
      }
    }
    return handoff.work(receiver, work);
  }
  checkOption(where, 'js', js, typeof js?.jetstreamManager === 'function', 'a JetStream client');
  const place = natsPlace(where, { stream, subject });
  const shared = nameMatching(
    where,
    'consumer',
    consumer,
    'jobhook-workers',
    NATS_NAME,
    'a consumer name (letters, digits, _ -)',
  );
  const missing = () =>
    noQueue(
      where,
      'JetStream stream',
      place.stream,
      ' (a worker given no hand-off does not create one: the hand-off does, with its duplicate window)',
    );
  return startWorker(
    { js: js!, place, consumer: shared, stream: () => existingStream(js!, place.stream, missing) },
    settings,
  );
}
