import type { JetStreamClient } from '@nats-io/jetstream';
import { checkOption, nameMatching, optionNames, refuseUnknownOptions } from '../common/option-checks.js';
import type { QueuedJobRunner } from '../handoff/handoff.js';
import { differentFromHandoff, noQueue } from '../handoff/worker.js';
import type { NatsHandoff } from './handoff.js';
import { existingStream, NATS_NAME, natsPlace } from './stream.js';
import { startWorker, workerSettings, type WorkerHandle } from './worker.js';

/** Options of {@link runNatsWorker}. @deprecated Use `receiver.work(options)` ({@link WorkOptions}). */
export interface RunNatsWorkerOptions {
  /** A JetStream client, needed without `handoff`; the worker never closes it. */
  js?: JetStreamClient;
  /** The stream, as given to `natsHandoff`. Default: the hand-off's, or `JOBHOOK`. */
  stream?: string;
  /** The subject, as given to `natsHandoff`. Default: the hand-off's, or `jobhook.events`. */
  subject?: string;
  /** The durable consumer every worker shares. Default: the hand-off's, or `jobhook-workers`. */
  consumer?: string;
  attempts?: number;
  backoffMs?: readonly number[];
  ackWaitMs?: number;
  concurrency?: number;
  /** The worker's own errors, not the handlers'. Default: `console.error`. */
  onWorkerError?: (error: Error) => void;
  /** The hand-off whose stream the worker consumes (another `stream`, `subject` or `consumer` is refused). */
  handoff?: NatsHandoff;
}

/** A running JetStream worker. @deprecated Use {@link WorkerHandle}. */
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

/** Runs the handlers of the events `natsHandoff` published. @deprecated Use `receiver.work(options)`. */
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
