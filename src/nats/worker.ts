import type {
  ConsumerConfig,
  ConsumerMessages,
  JetStreamClient,
  JetStreamManager,
  JsMsg,
} from '@nats-io/jetstream';
import { backoffDelay, sleep, type Backoff } from '../common/backoff.js';
import { JobhookError, isRecord } from '../common/errors.js';
import { numberList, optionNames, positiveInteger, refuseUnknownOptions } from '../common/option-checks.js';
import { messageOf } from '../common/logging.js';
import type {
  HandoffJob,
  QueuedJobRunner,
  WorkerHandle as AnyWorkerHandle,
  WorkOptions as AnyWorkOptions,
} from '../handoff/handoff.js';
import { checkReceiver, workerErrorReporter } from '../handoff/worker.js';
import { doneKeys, ATTEMPTS_HEADER, type FailedRecord, isNotFound, type NatsPlace } from './stream.js';

/** Options of a JetStream hand-off's worker (`handoff.work(receiver, options)`). */
export interface WorkOptions extends AnyWorkOptions {
  /** Attempts at an event before it is kept as failed (the consumer's `max_deliver` is one more). Default 10. */
  attempts?: number;
  /** The pause before each retry, in ms, by attempt (the last repeats). Default 2 s doubling to 8.5 minutes. */
  backoffMs?: readonly number[];
  /** The consumer's `ack_wait`, in ms: after it a dead worker's event goes to another. Default 30,000. */
  ackWaitMs?: number;
  /** Events this worker runs at once, each pulled only when a slot is free. Default 8. */
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
  consumer: string;
  stream: () => Promise<JetStreamManager>;
}

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

/** The job a message carries, or why none (such a message is kept as failed, not redelivered forever). */
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

/** Gives each event of the stream at `target` to `receiver.handleQueued`, pulled one per free slot. */
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
  // A quarter of ack_wait per try leaves room for a few before the event would go to another worker.
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

  /** One event, from its pull to its ack, signalling progress until the ack is confirmed. */
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
      const last = before > 0 || delivery >= attempts;
      if (hopeless || last) return recordFailed(msg, job, messageOf(error), attempt);
      msg.nak(backoffMs[Math.min(delivery - 1, backoffMs.length - 1)]);
      return;
    }
    if (job.key !== undefined) await markDone(job.key);
    await ack(msg);
  }

  /** Writes the key as done, again until confirmed, each try as short as an ack's (not the client's 5 s). */
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
  let pullsFailing = false;

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

  // One loop per slot, pulling only once free: an event pulled ahead could go to another worker too.
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

/** The pauses between tries at a write the server did not confirm (an ack, a done key). */
export const RESEND_BACKOFF: Backoff = { firstMs: 50, maxMs: 1000 };

interface Requester {
  request(subject: string, payload: string, options: { timeout: number }): Promise<unknown>;
  publish(subject: string, payload: string): void;
  isClosed(): boolean;
}

function replyRoute(js: JetStreamClient, msg: JsMsg): { nc: Requester; reply: string } | undefined {
  const nc = (js as { nc?: Requester }).nc;
  const reply = (msg as { reply?: unknown }).reply;
  return nc &&
    typeof nc.request === 'function' &&
    typeof nc.publish === 'function' &&
    typeof reply === 'string' &&
    reply.length > 0
    ? { nc, reply }
    : undefined;
}

/** Tells the server the worker is still on `msg` ("+WPI"), on the reply subject: `working()` stops at an ack. */
export function progressSignal(js: JetStreamClient, msg: JsMsg): () => void {
  const route = replyRoute(js, msg);
  return () => {
    try {
      if (route) {
        if (!route.nc.isClosed()) route.nc.publish(route.reply, '+WPI');
      } else msg.working();
    } catch {
      // The next signal, or the server's redelivery after ack_wait, covers it.
    }
  };
}

/** Acks `msg` and sends it again until the server confirms it or `stopped()` (a lost ack reruns handlers). */
export async function ackUntilLanded(
  js: JetStreamClient,
  msg: JsMsg,
  options: { tryMs: number; stopped: () => boolean },
): Promise<void> {
  const route = replyRoute(js, msg);
  const resend = route && (() => route.nc.request(route.reply, '+ACK', { timeout: options.tryMs }));
  for (let tries = 1; ; tries++) {
    try {
      await (tries === 1 ? msg.ackAck({ timeout: options.tryMs }) : resend!());
      return;
    } catch (error) {
      if (!route || options.stopped() || route.nc.isClosed()) throw error;
    }
    await sleep(backoffDelay(RESEND_BACKOFF, tries));
  }
}
