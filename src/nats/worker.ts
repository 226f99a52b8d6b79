import type {
  ConsumerConfig,
  ConsumerMessages,
  JetStreamClient,
  JetStreamManager,
  JsMsg,
} from '@nats-io/jetstream';
import { backoffDelay, sleep } from '../common/backoff.js';
import {
  JobhookError,
  isRecord,
  numberList,
  optionNames,
  positiveInteger,
  refuseUnknownOptions,
} from '../common/errors.js';
import { messageOf } from '../common/logging.js';
import type {
  HandoffJob,
  QueuedJobRunner,
  WorkerHandle as AnyWorkerHandle,
  WorkOptions as AnyWorkOptions,
} from '../handoff/handoff.js';
import { checkReceiver, workerErrorReporter } from '../handoff/worker.js';
import { ackUntilLanded, progressSignal, RESEND_BACKOFF } from './ack.js';
import { doneKeys } from './done.js';
import { ATTEMPTS_HEADER, type FailedRecord } from './failed-record.js';
import { isNotFound, type NatsPlace } from './stream.js';

/** Options of a JetStream hand-off's worker (`handoff.work(receiver, options)`). */
export interface WorkOptions extends AnyWorkOptions {
  /** Attempts at an event before it is kept as failed (the consumer's `max_deliver` is one more). Default 10. */
  attempts?: number;
  /**
   * The pause before each retry of a failed attempt, in ms, by attempt (the last value repeats).
   * Default 2 s doubling to 8.5 minutes: retries over about 17 minutes.
   */
  backoffMs?: readonly number[];
  /**
   * How long the server waits for a worker's answer before it gives the event to another worker,
   * in ms (the consumer's `ack_wait`): a worker that died is noticed after this. A running
   * handler tells the server it is still working every third of it. Default 30,000.
   */
  ackWaitMs?: number;
  /**
   * Events this worker runs at once. It asks the server for one only when one of these slots is
   * free, so an event it has not started is free for another worker. Default 8.
   */
  concurrency?: number;
  /** The worker's own errors (connection lost, a failed record not stored). Default `console.error`. */
  onWorkerError?: (error: Error) => void;
}

/** A running JetStream worker: what `handoff.work()` resolves to. */
export interface WorkerHandle extends AnyWorkerHandle {
  /** Stops taking events and resolves once the events it runs have finished. */
  close(): Promise<void>;
}

/** Where a worker takes its events from: the hand-off's client, stream, subject and consumer. */
export interface StreamPlace {
  js: JetStreamClient;
  place: NatsPlace;
  /** The durable consumer every worker of the stream shares. */
  consumer: string;
  /** The stream's manager, once the stream is there (created, or found). */
  stream: () => Promise<JetStreamManager>;
}

/** A worker's options, checked and resolved. */
export interface WorkerSettings {
  receiver: QueuedJobRunner;
  attempts: number;
  ackWaitMs: number;
  concurrency: number;
  backoffMs: readonly number[];
  onWorkerError: (error: unknown) => void;
}

/** The default pauses before retries: 2 s doubling, at most 512 s (2 + 4 + ... + 512 ≈ 17 min). */
export const DEFAULT_BACKOFF_MS: readonly number[] = Array.from({ length: 9 }, (_, i) =>
  backoffDelay({ firstMs: 2000, maxMs: 512_000 }, i + 1),
);

/**
 * The job a message carries, or why it carries none and what it holds: the worker records such a
 * message as failed (and acks it) rather than leave it in the stream, delivered again and again.
 */
function readJob(msg: JsMsg): { job: HandoffJob } | { unreadable: string; payload: unknown } {
  let value: unknown;
  try {
    value = msg.json<unknown>();
  } catch {
    return { unreadable: 'The message is not JSON.', payload: msg.string() };
  }
  if (isRecord(value) && (value.key === undefined || typeof value.key === 'string')) {
    return { job: value as unknown as HandoffJob };
  }
  return {
    unreadable: 'The message is not a job a hand-off stored (a JSON object, its key a string).',
    payload: value,
  };
}

/** How long a pull waits for an event before it asks again (the server's heartbeats show it is alive). */
const PULL_EXPIRES_MS = 5000;
/** The pause before asking again after a pull failed (the server is restarting, unreachable). */
const RETRY_PULL_MS = 250;

const WORK_OPTIONS = optionNames<WorkOptions>()([
  'attempts',
  'backoffMs',
  'ackWaitMs',
  'concurrency',
  'onWorkerError',
]);

/** Checks a worker's options for `where` (before anything reaches NATS). */
export function workerSettings(
  where: string,
  receiver: QueuedJobRunner,
  options: WorkOptions | undefined,
): WorkerSettings {
  refuseUnknownOptions(options, WORK_OPTIONS, where);
  checkReceiver(where, receiver);
  return {
    receiver,
    attempts: positiveInteger(where, 'attempts', options?.attempts, 10),
    ackWaitMs: positiveInteger(where, 'ackWaitMs', options?.ackWaitMs, 30_000, 'ms'),
    concurrency: positiveInteger(where, 'concurrency', options?.concurrency, 8),
    backoffMs: numberList(where, 'backoffMs', options?.backoffMs, DEFAULT_BACKOFF_MS, {
      nonEmpty: true,
      unit: 'ms',
    }),
    onWorkerError: workerErrorReporter(where, options?.onWorkerError),
  };
}

/**
 * Runs the receiver's handlers for the events of the stream at `target`, in this process, from a
 * durable pull consumer with explicit acks, pulled one event per free slot: an event is acked once
 * its handlers succeeded (the ack sent again until the server confirms it), after its key was
 * written to `<stream>_DONE` (created when missing), where the worker looks each event up before
 * it runs it: an event stored or delivered again after it ran (nats-server restarted and forgot
 * its `Nats-Msg-Id`, or crashed and forgot its ack) is acked without running. A failed attempt is
 * nak'ed with the next back-off pause; a worker that died (no ack, no progress within
 * `ackWaitMs`) has its event redelivered. After `attempts` attempts the event is
 * kept as failed: a record with the job and its last error goes to `<subject>.failed` in the
 * same stream (for `listFailed` and `retryFailed`), then the event is acked. The consumer's
 * `max_deliver` is `attempts + 1`: the one extra delivery records an event whose last attempt's
 * worker died.
 *
 * Handlers see `context.attempt`: the delivery count, plus the attempts an event made before it
 * was retried by hand. An event retried by hand gets one more attempt (as on BullMQ and pg-boss);
 * failing again, it is kept as failed again.
 */
export async function startWorker(target: StreamPlace, settings: WorkerSettings): Promise<WorkerHandle> {
  const { js, place, consumer } = target;
  const { receiver, attempts, ackWaitMs, concurrency, backoffMs, onWorkerError } = settings;
  const jsm = await target.stream();
  const config: Partial<ConsumerConfig> = {
    durable_name: consumer,
    ack_policy: 'explicit',
    deliver_policy: 'all',
    filter_subject: place.subject,
    ack_wait: ackWaitMs * 1_000_000,
    max_deliver: attempts + 1,
    max_ack_pending: -1,
  };
  const existing = await jsm.consumers.info(place.stream, consumer).catch((error: unknown) => {
    if (isNotFound(error)) return undefined;
    throw error;
  });
  if (!existing) await jsm.consumers.add(place.stream, config);
  else
    await jsm.consumers.update(place.stream, consumer, {
      ack_wait: config.ack_wait!,
      max_deliver: config.max_deliver!,
    });

  const done = doneKeys(js, jsm, place);
  let closing = false;
  // Each try at an ack waits this long for the server's answer: a quarter of ack_wait leaves
  // room for a few more before the server would give the event to another worker.
  const ackTryMs = Math.min(5000, Math.max(250, Math.floor(ackWaitMs / 4)));
  const ack = (msg: JsMsg) => ackUntilLanded(js, msg, { tryMs: ackTryMs, stopped: () => closing });

  async function recordFailed(msg: JsMsg, job: HandoffJob, error: string, made: number) {
    const record: FailedRecord = { job, error, attempts: made, failedAt: Date.now() };
    // One record per message, also when this worker dies between the record and the ack.
    await js.publish(place.failedSubject, JSON.stringify(record), {
      msgID: `jobhook-failed:${place.subject}:${msg.seq}`,
      expect: { streamName: place.stream },
    });
    await ack(msg);
  }

  /**
   * One event, from its pull to its ack. The server hears that the worker is still on it every
   * third of `ackWaitMs` until the ack is confirmed, not only while its handlers run: writing the
   * done key and the ack can take a while when the link is down (each sent again until
   * confirmed), and an event whose ack wait ran out meanwhile would go to another worker, find no
   * done key yet and run a second time.
   */
  async function handle(msg: JsMsg) {
    const stillWorking = progressSignal(js, msg);
    const progress = setInterval(stillWorking, Math.max(1, Math.floor(ackWaitMs / 3)));
    try {
      await settle(msg);
    } finally {
      clearInterval(progress);
    }
  }

  async function settle(msg: JsMsg) {
    const read = readJob(msg);
    if ('unreadable' in read) {
      const job = { key: undefined, type: '', deliveryId: undefined, payload: read.payload, receivedAt: 0 };
      return recordFailed(msg, job, read.unreadable, 0);
    }
    const { job } = read;
    // Ran already: stored again after nats-server restarted, or delivered again after it crashed.
    if (job.key !== undefined && (await done.has(job.key))) return ack(msg);
    const before = Number(msg.headers?.get(ATTEMPTS_HEADER) ?? 0) || 0;
    const delivery = msg.info.deliveryCount;
    const attempt = before + delivery;
    if (delivery > attempts) {
      return recordFailed(
        msg,
        job,
        `The worker running attempt ${attempt - 1} stopped before it finished.`,
        attempt - 1,
      );
    }
    try {
      await receiver.handleQueued(job, { attempt });
    } catch (error) {
      const hopeless = error instanceof JobhookError && error.code === 'invalid_job';
      // An event retried by hand gets one more attempt, as on BullMQ and pg-boss.
      const last = before > 0 || delivery >= attempts;
      if (hopeless || last) return recordFailed(msg, job, messageOf(error), attempt);
      msg.nak(backoffMs[Math.min(delivery - 1, backoffMs.length - 1)]);
      return;
    }
    if (job.key !== undefined) await markDone(job.key);
    await ack(msg);
  }

  /**
   * Writes the key as done, again until the server confirms it (as an ack). Each try waits as
   * long as a try at an ack: a write lost with a connection gets no answer, and waiting out the
   * client's default time-out (5 s) would leave the key unwritten long after the link is back.
   */
  async function markDone(key: string) {
    for (let tries = 1; ; tries++) {
      try {
        return await done.add(key, ackTryMs);
      } catch (error) {
        if (closing) throw error;
      }
      await sleep(backoffDelay(RESEND_BACKOFF, tries));
    }
  }

  const pull = await js.consumers.get(place.stream, consumer);
  const fetching = new Set<ConsumerMessages>();
  // Pulls fail together while the server is away: one report per outage, not one per pull.
  let pullsFailing = false;

  /** One event, asked for when a slot is free; null when none came within the pull's expiry. */
  async function takeOne(): Promise<JsMsg | null> {
    const batch = await pull.fetch({ max_messages: 1, expires: PULL_EXPIRES_MS });
    fetching.add(batch);
    try {
      for await (const msg of batch) return msg;
      return null;
    } finally {
      fetching.delete(batch);
    }
  }

  // One loop per slot, each asking the server for one event only once the slot is free: the
  // worker holds no event it has not started. An event pulled ahead while every slot was busy
  // would wait here with its ack_wait running and nothing telling the server it is being worked
  // on; the server would give it to another worker, and both would run it.
  async function slot() {
    while (!closing) {
      let msg: JsMsg | null;
      try {
        msg = await takeOne();
        pullsFailing = false;
      } catch (error) {
        if (closing) break;
        if (!pullsFailing) onWorkerError(error);
        pullsFailing = true;
        await sleep(RETRY_PULL_MS);
        continue;
      }
      if (!msg) continue;
      // Taken as the worker closes: given back for another worker at once, not after ack_wait.
      if (closing) msg.nak();
      else await handle(msg).catch(onWorkerError);
    }
  }
  const slots = Array.from({ length: concurrency }, slot);

  return {
    async close() {
      closing = true;
      for (const batch of fetching) batch.stop();
      await Promise.all(slots);
    },
  };
}
