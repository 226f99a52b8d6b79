import type { JetStreamClient, MsgRequest } from '@nats-io/jetstream';
import { JobhookError } from '../common/errors.js';
import {
  checkOption,
  nameMatching,
  optionNames,
  positiveNumber,
  refuseUnknownOptions,
} from '../common/option-checks.js';
import {
  failedLimit,
  type FailedEvent,
  type FailedEvents,
  type Handoff,
  type HandoffJob,
  type QueuedJobRunner,
} from '../handoff/handoff.js';
import { bounded } from '../common/deadline.js';
import {
  ATTEMPTS_HEADER,
  type FailedRecord,
  existingStream,
  isNotFound,
  NATS_NAME,
  natsPlace,
  streamEnsurer,
} from './stream.js';
import { startWorker, workerSettings, type WorkerHandle, type WorkOptions } from './worker.js';

/** Options of {@link natsHandoff}. */
export interface NatsHandoffOptions {
  /** A JetStream client: `jetstream(await connect({ servers }))`. The hand-off never closes it. */
  js: JetStreamClient;
  /** The stream; created on first use when missing (see `duplicateWindowMs`). Default `JOBHOOK`. */
  stream?: string;
  /** The subject events are published on; failed ones go to `<subject>.failed`. Default `jobhook.events`. */
  subject?: string;
  /** The duplicate window of a stream the hand-off creates, in ms (~100 bytes a key in memory). Default 72 h. */
  duplicateWindowMs?: number;
  /** Longest wait for the stream's ack, in ms, before the delivery answers 503. Default 5,000. */
  timeoutMs?: number;
  /** The durable consumer the hand-off's workers share (created when missing). Default `jobhook-workers`. */
  consumer?: string;
  /** Where the warning about a short duplicate window goes. Default `console.warn`. */
  warn?: (line: string) => void;
}

/** The hand-off to JetStream: its options, resolved, its failed events, and its worker. */
export interface NatsHandoff extends Handoff<WorkOptions, WorkerHandle>, FailedEvents {
  readonly stream: string;
  readonly subject: string;
  readonly consumer: string;
  /** Starts a worker on this hand-off's stream and consumer (created when missing), with the consumer's retries. */
  work(receiver: QueuedJobRunner, options?: WorkOptions): Promise<WorkerHandle>;
}

const NATS_HANDOFF_OPTIONS = optionNames<NatsHandoffOptions>()([
  'js',
  'stream',
  'subject',
  'duplicateWindowMs',
  'timeoutMs',
  'consumer',
  'warn',
]);

/** Verify, then enqueue on JetStream (`handoff: natsHandoff({ js })`): one message per dedupe key. */
export function natsHandoff(options: NatsHandoffOptions): NatsHandoff {
  refuseUnknownOptions(options, NATS_HANDOFF_OPTIONS, 'natsHandoff');
  const js = options?.js;
  const valid = typeof js?.publish === 'function' && typeof js.jetstreamManager === 'function';
  checkOption(
    'natsHandoff',
    'js',
    js,
    valid,
    'a JetStream client, e.g. jetstream(await connect({ servers }))',
  );
  const place = natsPlace('natsHandoff', options);
  const timeoutMs = positiveNumber('natsHandoff', 'timeoutMs', options.timeoutMs, 5000, { unit: 'ms' });
  const consumer = nameMatching(
    'natsHandoff',
    'consumer',
    options.consumer,
    'jobhook-workers',
    NATS_NAME,
    'a consumer name (letters, digits, _ -)',
  );
  const ensureStream = streamEnsurer(js, place, options.warn ?? ((line) => console.warn(line)));
  const listedStream = () =>
    existingStream(
      js,
      place.stream,
      () => new JobhookError('invalid_options', `natsHandoff: there is no JetStream stream ${place.stream}.`),
    );

  async function publish(job: HandoffJob) {
    await ensureStream();
    await js.publish(place.subject, JSON.stringify(job), {
      ...(job.key !== undefined && { msgID: job.key }),
      expect: { streamName: place.stream },
      timeout: timeoutMs,
    });
  }

  return {
    stream: place.stream,
    subject: place.subject,
    consumer,
    enqueue: (job) => bounded(publish(job), timeoutMs, 'handoff_failed', 'The event could not be queued'),
    async listFailed(listOptions) {
      const limit = failedLimit(listOptions, 'natsHandoff.listFailed');
      const jsm = await listedStream();
      const failed: FailedEvent[] = [];
      let seq = 1;
      while (failed.length < limit) {
        const stored = await jsm.streams
          // STREAM.MSG.GET takes next_by_subj (server 2.9 and later); the client's type omits it.
          .getMessage(place.stream, { seq, next_by_subj: place.failedSubject } as unknown as MsgRequest)
          .catch(missingAsNull);
        if (!stored) break;
        failed.push(failedEventOf(String(stored.seq), stored.json<FailedRecord>()));
        seq = stored.seq + 1;
      }
      return failed;
    },
    async retryFailed(id) {
      const seq = Number(id);
      if (!Number.isSafeInteger(seq) || seq <= 0) return false;
      const jsm = await listedStream();
      const stored = await jsm.streams.getMessage(place.stream, { seq }).catch(missingAsNull);
      if (!stored || stored.subject !== place.failedSubject) return false;
      const record = stored.json<FailedRecord>();
      const { headers } = await import('@nats-io/transport-node');
      const attempts = headers();
      attempts.set(ATTEMPTS_HEADER, String(record.attempts));
      // The record's sequence is the message id: two retries of one record publish one message.
      await js.publish(place.subject, JSON.stringify(record.job), {
        msgID: `jobhook-retry:${place.failedSubject}:${seq}`,
        headers: attempts,
        expect: { streamName: place.stream },
        timeout: timeoutMs,
      });
      await jsm.streams.deleteMessage(place.stream, seq).catch((error: unknown) => {
        if (!isNotFound(error)) throw error;
      });
      return true;
    },
    async work(receiver, workOptions) {
      const settings = workerSettings('natsHandoff.work', receiver, workOptions);
      return startWorker({ js, place, consumer, stream: ensureStream }, settings);
    },
  };
}

function missingAsNull(error: unknown): null {
  if (isNotFound(error)) return null;
  throw error;
}

function failedEventOf(id: string, record: FailedRecord): FailedEvent {
  const job: Partial<HandoffJob> = record.job ?? {};
  return {
    id,
    key: job.key,
    type: job.type ?? '',
    deliveryId: job.deliveryId ?? undefined,
    payload: job.payload,
    error: record.error,
    attempts: record.attempts,
    failedAt: record.failedAt,
  };
}
