import { JobhookError } from '../../common/errors.js';
import { randomBytes } from 'node:crypto';
import { request as httpRequest } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { samplePayload, type GatewayEventType } from '../../events/event-types.js';
import type { Activity } from './activity.js';
import type { ChangeSignal } from './changes.js';
import type { ResolvedGatewayOptions } from './config.js';
import {
  MAX_ANSWER_BYTES,
  type DeliveryAttempt,
  type DeliveryLog,
  type DroppedDelivery,
  type DeliveryRecord,
} from './delivery-log.js';
import { shapedBody, shapeHeaders } from './payload-shapes.js';
import { nowIso, type GatewayState, type TaskRecord, type WebhookRecord } from './state.js';

const randomId = (prefix: string) => `${prefix}_${randomBytes(12).toString('hex')}`;

/** The default payload of `task`'s final event (docs/design.md, "The wire contract"). */
export function eventPayload(task: TaskRecord, type: GatewayEventType) {
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
  /** Every attempt is appended here (`gateway.deliveries`). */
  attempts: DeliveryAttempt[];
  /** Every delivery dropped on purpose is appended here (`gateway.dropped`). */
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
      // Never sent, no attempt (`deliveries.dropRate`): what a receiver sees when a gateway gives up.
      if (options.dropRate > 0 && Math.random() < options.dropRate) {
        drop(webhook, event);
        continue;
      }
      start(webhook, { ...event, redelivery: false });
      // A second, concurrent copy of the same delivery (same webhook-id), as a gateway retrying
      // on a lost answer sends: `deliveries.duplicateRate`, for tests of deduplication.
      if (options.duplicateRate > 0 && Math.random() < options.duplicateRate) {
        start(webhook, { ...event, redelivery: false, duplicate: true });
      }
    }
  }

  /**
   * Sends a delivery again, as a new series of attempts with the same `webhook-id` and body (what
   * Standard Webhooks asks of a resend), so a receiver that dedupes answers it as a duplicate.
   * With `accountId`, only a delivery of that account.
   */
  function redeliver(deliveryId: string, accountId?: number): DeliveryRecord {
    const original = log.get(deliveryId);
    // Another account's delivery is as unknown as a missing one (the console acts for one account).
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
    // deliver() catches every failure of an attempt itself; this only keeps a simulator bug
    // from becoming an unhandled rejection that would crash the test process.
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
      // A deleted webhook gets no more attempts; neither does anything once the simulator closes.
      if (activity.closed || state.webhooks.get(webhook.id) !== webhook) return;
      if (attempt > 1) settle(record, 'sending');
      // `idOnRetry: 'new'`: every attempt but a delivery's first carries a fresh id.
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

  /** Whether a failed attempt with this answer (none: `undefined`) is retried (`deliveries.retryOn`). */
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
      signed = await options.signing.headers({ secret: webhook.secret_key, body, id: sentId, timestamp });
    } catch {
      // Only a Verifier given as `signing` can throw here (the families' secrets are checked on
      // creation); its message is not kept, since it might quote the secret.
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

/**
 * One POST on a fresh connection (no keep-alive): a test's receiver server can then close at
 * once, instead of waiting for an idle connection the simulator would otherwise hold open.
 * Resolves with the status and the first bytes of the answer once the whole answer is read (the
 * rest is read and dropped); redirects are not followed.
 */
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
    const timer = setTimeout(
      () => req.destroy(new TimeoutError(`timed out after ${timeoutMs} ms`)),
      timeoutMs,
    );
    req.on('response', (res) => {
      const kept: Buffer[] = [];
      let size = 0;
      res.on('data', (chunk: Buffer) => {
        if (size < MAX_ANSWER_BYTES) kept.push(chunk.subarray(0, MAX_ANSWER_BYTES - size));
        size += chunk.length;
      });
      res.on('end', () => {
        clearTimeout(timer);
        resolve({ status: res.statusCode ?? 0, answer: Buffer.concat(kept).toString('utf8') });
      });
      res.on('error', (error) => {
        clearTimeout(timer);
        reject(error);
      });
    });
    req.on('error', (error) => {
      clearTimeout(timer);
      reject(error);
    });
    req.end(body);
  });
}

/** Node's TLS verification codes, as a developer reads them, with what to do. */
const TLS_FAILURES: Record<string, string> = {
  UNABLE_TO_VERIFY_LEAF_SIGNATURE: "the receiver's certificate is not trusted",
  UNABLE_TO_GET_ISSUER_CERT_LOCALLY: "the receiver's certificate is not trusted",
  SELF_SIGNED_CERT_IN_CHAIN: "the receiver's certificate is not trusted",
  DEPTH_ZERO_SELF_SIGNED_CERT: "the receiver's certificate is self-signed and not trusted",
  CERT_HAS_EXPIRED: "the receiver's certificate has expired",
  ERR_TLS_CERT_ALTNAME_INVALID: "the receiver's certificate does not name its host",
};

/**
 * Why an attempt to `url` failed, in words a developer acts on: the simulator delivers from the
 * machine it runs on, so a placeholder domain or a receiver that is not running fails every time.
 */
function describe(error: unknown, url: string): string {
  const code = (error as { code?: unknown }).code;
  const tls = typeof code === 'string' ? TLS_FAILURES[code] : undefined;
  if (tls) return `TLS: ${tls} (${code as string}); a test CA goes in deliveries.ca`;
  if (typeof code !== 'string') return error instanceof Error ? error.message : String(error);
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
