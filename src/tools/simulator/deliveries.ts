// Deliveries: what the simulator records of each (one event to one webhook, with its attempts),
// and how it sends them, retries them and sends them again.
import { randomBytes } from 'node:crypto';
import { request as httpRequest } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { JobhookError } from 'jobhook';
import { deadline, samplePayload, signedHeaders, type GatewayEventType, messageOf } from 'jobhook/extend';
import type { ResolvedGatewayOptions } from './config.js';
import { shapedBody, shapeHeaders } from './payload-shapes.js';
import {
  nowIso,
  type Activity,
  type ChangeSignal,
  type GatewayState,
  type TaskRecord,
  type WebhookRecord,
} from './state.js';

/** One attempt to deliver one event to one webhook, as the simulator saw it. */
export interface DeliveryAttempt {
  webhookId: number;
  /** The delivery's id (`webhook-id`), the same on every attempt: give it to `redeliver()`. */
  deliveryId: string;
  /** The id this attempt carried: `deliveryId`, or a fresh one with `deliveries.idOnRetry: 'new'`. */
  sentId: string;
  /** The payload's `id`: the same for every webhook that receives this event. */
  eventId: string;
  type: string;
  taskId: string;
  /** 1 for the first attempt. */
  attempt: number;
  /** On the attempts of the second copy of a delivery sent twice (`deliveries.duplicateRate`). */
  duplicate?: true;
  ok: boolean;
  /** The receiver's HTTP status; absent after a connection error or a time-out. */
  status?: number;
  error?: string;
  /** When the attempt started (ISO 8601). */
  at: string;
  /** From sending the request to the end of the answer (or the failure), in milliseconds. */
  durationMs: number;
  /** The first 2,048 bytes of the receiver's answer body, as UTF-8 text. */
  answer?: string;
  /** On the attempts of a delivery sent again with `gateway.redeliver()`. */
  redelivery?: true;
}

/** A delivery the simulator chose never to send (`deliveries.dropRate`): no attempt was made. */
export interface DroppedDelivery {
  webhookId: number;
  deliveryId: string;
  eventId: string;
  type: string;
  taskId: string;
  /** When it would have been sent (ISO 8601). */
  at: string;
}

/** `cancelled`: its webhook was deleted or the simulator closed first; `dropped`: never sent, on purpose. */
export type DeliveryState = 'sending' | 'retrying' | 'delivered' | 'failed' | 'cancelled' | 'dropped';

export interface DeliveryRecord {
  /** 1, 2, 3…: tells a redelivery from the delivery it sends again, which share a `webhook-id`. */
  number: number;
  deliveryId: string;
  eventId: string;
  type: string;
  taskId: string;
  webhookId: number;
  /** The console shows each account its own deliveries only. */
  accountId: number;
  /** The exact body every attempt sends. */
  body: string;
  startedAt: string;
  redelivery: boolean;
  duplicate?: boolean | undefined;
  state: DeliveryState;
  /** When the next attempt is due, while `retrying`. */
  nextAttemptAt?: string;
  /** Oldest first; the same objects as in `gateway.deliveries`. */
  attempts: DeliveryAttempt[];
}

/** Enough of an answer to read an error, bounded against a hostile receiver. */
const MAX_ANSWER_BYTES = 2048;

export function deliveryLog() {
  const records: DeliveryRecord[] = [];
  const firsts = new Map<string, DeliveryRecord>();
  return {
    add(record: Omit<DeliveryRecord, 'number' | 'attempts'>): DeliveryRecord {
      const added = { ...record, number: records.length + 1, attempts: [] };
      records.push(added);
      if (!firsts.has(added.deliveryId)) firsts.set(added.deliveryId, added);
      return added;
    },
    /** The first delivery with this `webhook-id` (its redeliveries send the same body). */
    get: (deliveryId: string) => firsts.get(deliveryId),
    /** Every delivery, oldest first. */
    all: (): readonly DeliveryRecord[] => records,
  };
}

export type DeliveryLog = ReturnType<typeof deliveryLog>;

const randomId = (prefix: string) => `${prefix}_${randomBytes(12).toString('hex')}`;

/** The default payload of `task`'s final event. */
function eventPayload(task: TaskRecord, type: GatewayEventType) {
  return samplePayload(type, {
    id: randomId('evt'),
    taskId: task.task_id,
    createdAt: task.updated_at,
    ...(task.image_url !== undefined && { imageUrl: task.image_url }),
    ...(task.error !== undefined && { error: task.error }),
  });
}

export interface DeliveryServiceParts {
  state: GatewayState;
  options: ResolvedGatewayOptions;
  activity: Activity;
  attempts: DeliveryAttempt[];
  dropped: DroppedDelivery[];
  log: DeliveryLog;
  changes: ChangeSignal;
}

export function deliveryService({
  state,
  options,
  activity,
  attempts,
  dropped,
  log,
  changes,
}: DeliveryServiceParts) {
  /** Sends `task`'s final event to every active webhook of its account that subscribes to it. */
  function dispatch(task: TaskRecord): void {
    const type =
      task.status === 'completed' ? 'job.completed' : task.status === 'failed' ? 'job.failed' : undefined;
    if (!type) return;
    const payload = eventPayload(task, type);
    const body = shapedBody(options.payload, payload);
    for (const webhook of state.webhooks.values()) {
      if (webhook.account_id !== task.account_id || webhook.status !== 'active') continue;
      if (!webhook.events.includes(type)) continue;
      if (webhook.api_key_id !== null && webhook.api_key_id !== task.api_key_id) continue;
      const event = { deliveryId: randomId('msg'), eventId: payload.id, type, taskId: task.task_id, body };
      if (options.dropRate > 0 && Math.random() < options.dropRate) {
        drop(webhook, event);
        continue;
      }
      start(webhook, { ...event, redelivery: false });
      // A concurrent copy, as a gateway retrying on a lost answer sends.
      if (options.duplicateRate > 0 && Math.random() < options.duplicateRate) {
        start(webhook, { ...event, redelivery: false, duplicate: true });
      }
    }
  }

  /** Sends a delivery again with the same `webhook-id` and body, as Standard Webhooks asks of a resend. */
  function redeliver(deliveryId: string, accountId?: number): DeliveryRecord {
    const original = log.get(deliveryId);
    // Another account's delivery is as unknown as a missing one.
    if (!original || (accountId !== undefined && original.accountId !== accountId))
      throw new JobhookError('invalid_options', `No delivery ${deliveryId}.`);
    const webhook = state.webhooks.get(original.webhookId);
    if (!webhook)
      throw new JobhookError('invalid_options', `The webhook of delivery ${deliveryId} has been deleted.`);
    const { eventId, type, taskId, body } = original;
    return start(webhook, { deliveryId, eventId, type, taskId, body, redelivery: true });
  }

  function drop(webhook: WebhookRecord, event: Omit<DroppedDelivery, 'webhookId' | 'at'> & { body: string }) {
    const at = nowIso();
    const owner = { webhookId: webhook.id, accountId: webhook.account_id };
    log.add({ ...owner, startedAt: at, state: 'dropped', redelivery: false, ...event });
    const { deliveryId, eventId, type, taskId } = event;
    dropped.push({ webhookId: webhook.id, deliveryId, eventId, type, taskId, at });
    changes.notify();
  }

  function start(
    webhook: WebhookRecord,
    event: Pick<DeliveryRecord, 'deliveryId' | 'eventId' | 'type' | 'taskId' | 'body' | 'redelivery'> & {
      duplicate?: boolean;
    },
  ): DeliveryRecord {
    const owner = { webhookId: webhook.id, accountId: webhook.account_id };
    const record = log.add({ ...owner, startedAt: nowIso(), state: 'sending', ...event });
    changes.notify();
    // deliver() catches each attempt's failure: this catch is for a simulator bug only.
    activity
      .track(async () => {
        try {
          await deliver(webhook, record);
        } finally {
          if (record.state === 'sending' || record.state === 'retrying') settle(record, 'cancelled');
        }
      })
      .catch(() => undefined);
    return record;
  }

  function settle(record: DeliveryRecord, to: DeliveryRecord['state'], nextAttemptAt?: string) {
    record.state = to;
    record.nextAttemptAt = nextAttemptAt;
    changes.notify();
  }

  async function deliver(webhook: WebhookRecord, record: DeliveryRecord) {
    const { deliveryId, eventId, type, taskId, body } = record;
    const delivery = { deliveryId, eventId, type, taskId };
    const retries = options.retryDelaysMs;
    for (let attempt = 1; attempt <= retries.length + 1; attempt++) {
      if (activity.closed || state.webhooks.get(webhook.id) !== webhook) return;
      if (attempt > 1) settle(record, 'sending');
      const fresh = options.idOnRetry === 'new' && (attempt > 1 || record.redelivery);
      const sentId = fresh ? randomId('msg') : deliveryId;
      const outcome = await attemptOnce(webhook, { body, type, sentId });
      if (activity.closed) return;
      webhook.last_sent_at = nowIso();
      if (outcome.ok) {
        webhook.total_sent++;
        webhook.last_error = null;
      } else {
        webhook.total_failed++;
        webhook.last_error = outcome.error ?? 'failed';
      }
      const made: DeliveryAttempt = { webhookId: webhook.id, ...delivery, sentId, attempt, ...outcome };
      if (record.redelivery) made.redelivery = true;
      if (record.duplicate) made.duplicate = true;
      attempts.push(made);
      record.attempts.push(made);
      if (outcome.ok) return settle(record, 'delivered');
      const delay = retries[attempt - 1];
      if (delay === undefined || !retried(outcome.status)) return settle(record, 'failed');
      settle(record, 'retrying', new Date(Date.now() + delay).toISOString());
      if (!(await activity.wait(delay))) return;
    }
  }

  /** `deliveries.retryOn`; `status` is undefined without an answer. */
  function retried(status: number | undefined): boolean {
    return options.retryOn === 'any-failure' || status === undefined || status >= 500;
  }

  /** One POST, freshly timestamped and signed, so that a late retry still passes the receiver's tolerance. */
  async function attemptOnce(
    webhook: WebhookRecord,
    { body, type, sentId }: { body: string; type: string; sentId: string },
  ): Promise<Pick<DeliveryAttempt, 'ok' | 'status' | 'error' | 'at' | 'durationMs' | 'answer'>> {
    const timestamp = Math.floor(Date.now() / 1000);
    const at = nowIso();
    let signed: Record<string, string>;
    try {
      signed = await signedHeaders(options.signing, {
        secret: webhook.secret_key,
        body,
        id: sentId,
        timestamp,
      });
    } catch {
      // Only a Verifier given as `signing` can throw here; its message might quote the secret.
      return { ok: false, error: 'signing failed: the `signing` Verifier threw', at, durationMs: 0 };
    }
    const headers: Record<string, string> = {
      'content-type': 'application/json',
      'user-agent': 'jobhook-gateway-simulator',
      ...shapeHeaders(options.payload, type),
      ...signed,
    };
    const closing = activity.closeSignal();
    const started = performance.now();
    const elapsed = () => Math.round((performance.now() - started) * 10) / 10;
    try {
      const { status, answer } = await post(webhook.url, headers, body, {
        timeoutMs: options.deliveryTimeoutMs,
        signal: closing.signal,
        ca: options.trustedCa,
      });
      const timing = { at, durationMs: elapsed(), answer };
      if (status >= 200 && status < 300) return { ok: true, status, ...timing };
      return { ok: false, status, error: `HTTP ${status}`, ...timing };
    } catch (error) {
      return {
        ok: false,
        error:
          error instanceof TimeoutError
            ? error.message
            : `connection failed: ${describe(error, webhook.url)}`,
        at,
        durationMs: elapsed(),
      };
    } finally {
      closing.dispose();
    }
  }

  return { dispatch, redeliver };
}

class TimeoutError extends Error {}

/** One POST on a fresh connection (a test's receiver can close at once), not following redirects. */
function post(
  url: string,
  headers: Record<string, string>,
  body: string,
  {
    timeoutMs,
    signal,
    ca,
  }: { timeoutMs: number; signal: AbortSignal; ca: readonly (string | Buffer)[] | undefined },
) {
  return new Promise<{ status: number; answer: string }>((resolve, reject) => {
    const https = url.startsWith('https:');
    const send = https ? httpsRequest : httpRequest;
    const req = send(url, {
      method: 'POST',
      agent: false,
      headers: { ...headers, 'content-length': String(Buffer.byteLength(body)) },
      signal,
      ...(https && ca !== undefined && { ca: [...ca] }),
    });
    const timer = deadline(timeoutMs, () => req.destroy(new TimeoutError(`timed out after ${timeoutMs} ms`)));
    req.on('response', (res) => {
      const kept: Buffer[] = [];
      let size = 0;
      res.on('data', (chunk: Buffer) => {
        if (size < MAX_ANSWER_BYTES) kept.push(chunk.subarray(0, MAX_ANSWER_BYTES - size));
        size += chunk.length;
      });
      res.on('end', () => {
        timer.cancel();
        resolve({ status: res.statusCode ?? 0, answer: Buffer.concat(kept).toString('utf8') });
      });
      res.on('error', (error) => {
        timer.cancel();
        reject(error);
      });
    });
    req.on('error', (error) => {
      timer.cancel();
      reject(error);
    });
    req.end(body);
  });
}

const TLS_FAILURES: Record<string, string> = {
  UNABLE_TO_VERIFY_LEAF_SIGNATURE: "the receiver's certificate is not trusted",
  UNABLE_TO_GET_ISSUER_CERT_LOCALLY: "the receiver's certificate is not trusted",
  SELF_SIGNED_CERT_IN_CHAIN: "the receiver's certificate is not trusted",
  DEPTH_ZERO_SELF_SIGNED_CERT: "the receiver's certificate is self-signed and not trusted",
  CERT_HAS_EXPIRED: "the receiver's certificate has expired",
  ERR_TLS_CERT_ALTNAME_INVALID: "the receiver's certificate does not name its host",
};

/** Why an attempt to `url` failed, in words a developer acts on. */
function describe(error: unknown, url: string): string {
  const code = (error as { code?: unknown }).code;
  const tls = typeof code === 'string' ? TLS_FAILURES[code] : undefined;
  if (tls) return `TLS: ${tls} (${code as string}); a test CA goes in deliveries.ca`;
  if (typeof code !== 'string') return messageOf(error);
  const { host, hostname, pathname } = new URL(url);
  const reachable = `register a URL it can reach, such as http://127.0.0.1:3000${pathname}`;
  switch (code) {
    case 'ENOTFOUND':
    case 'EAI_AGAIN':
      return `could not resolve ${hostname} (${code}): the simulator delivers from this machine; ${reachable}`;
    case 'ECONNREFUSED':
      return `nothing accepts connections at ${host} (${code}): is the receiver running, on that port?`;
    case 'EHOSTUNREACH':
    case 'ENETUNREACH':
    case 'ETIMEDOUT':
      return `cannot reach ${host} from this machine (${code}); ${reachable}`;
    case 'ECONNRESET':
      return `the receiver at ${host} closed the connection before answering (${code})`;
    default:
      return code;
  }
}
