import { randomBytes } from 'node:crypto';
import { request as httpRequest } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { standardWebhooks } from '../../signatures/standard-webhooks.js';
import type { Activity } from './activity.js';
import type { ResolvedGatewayOptions } from './config.js';
import { nowIso, type GatewayState, type TaskRecord, type WebhookRecord } from './state.js';

/** One attempt to deliver one event to one webhook, as the simulator saw it. */
export interface DeliveryAttempt {
  webhookId: number;
  /** The `webhook-id` header: the same on every attempt of one delivery. */
  deliveryId: string;
  /** The payload's `id`: the same for every webhook that receives this event. */
  eventId: string;
  type: string;
  taskId: string;
  /** 1 for the first attempt. */
  attempt: number;
  /** Set on the attempts of the second copy of a delivery sent twice (`deliveries.duplicateRate`). */
  duplicate?: true;
  ok: boolean;
  /** The receiver's HTTP status; absent after a connection error or a time-out. */
  status?: number;
  error?: string;
}

const signer = standardWebhooks();

const randomId = (prefix: string) => `${prefix}_${randomBytes(12).toString('hex')}`;

/** The delivery payload of DESIGN.md's wire contract. */
export function eventPayload(task: TaskRecord, type: string) {
  const data =
    task.status === 'completed'
      ? { task_id: task.task_id, status: task.status, image_url: task.image_url }
      : { task_id: task.task_id, status: task.status, error: task.error };
  return { id: randomId('evt'), type, created_at: task.updated_at, data };
}

export function deliveryService(
  state: GatewayState,
  options: ResolvedGatewayOptions,
  activity: Activity,
  attempts: DeliveryAttempt[],
) {
  /** Sends `task`'s final event to every active webhook of its account that subscribes to it. */
  function dispatch(task: TaskRecord): void {
    const type =
      task.status === 'completed' ? 'job.completed' : task.status === 'failed' ? 'job.failed' : undefined;
    if (!type) return;
    const payload = eventPayload(task, type);
    const body = JSON.stringify(payload);
    for (const webhook of state.webhooks.values()) {
      if (webhook.account_id !== task.account_id || webhook.status !== 'active') continue;
      if (!webhook.events.includes(type)) continue;
      if (webhook.api_key_id !== null && webhook.api_key_id !== task.api_key_id) continue;
      const delivery = { deliveryId: randomId('msg'), eventId: payload.id, type, taskId: task.task_id };
      // deliver() catches every failure of an attempt itself; this only keeps a simulator bug
      // from becoming an unhandled rejection that would crash the test process.
      activity.track(() => deliver(webhook, body, delivery)).catch(() => undefined);
      if (options.duplicateRate > 0 && Math.random() < options.duplicateRate) {
        activity.track(() => deliver(webhook, body, delivery, true)).catch(() => undefined);
      }
    }
  }

  async function deliver(
    webhook: WebhookRecord,
    body: string,
    delivery: Omit<DeliveryAttempt, 'attempt' | 'ok' | 'webhookId'>,
    duplicate = false,
  ) {
    const retries = options.retryDelaysMs;
    for (let attempt = 1; attempt <= retries.length + 1; attempt++) {
      // A deleted webhook gets no more attempts; neither does anything once the simulator closes.
      if (activity.closed || state.webhooks.get(webhook.id) !== webhook) return;
      const outcome = await attemptOnce(webhook, body, delivery.deliveryId);
      if (activity.closed) return;
      webhook.last_sent_at = nowIso();
      if (outcome.ok) {
        webhook.total_sent++;
        webhook.last_error = null;
      } else {
        webhook.total_failed++;
        webhook.last_error = outcome.error ?? 'failed';
      }
      attempts.push({
        webhookId: webhook.id,
        ...delivery,
        attempt,
        ...(duplicate ? { duplicate: true as const } : {}),
        ...outcome,
      });
      if (outcome.ok) return;
      const delay = retries[attempt - 1];
      if (delay === undefined || !(await activity.wait(delay))) return;
    }
  }

  /** One POST, freshly timestamped and signed, so that a late retry still passes the receiver's tolerance. */
  async function attemptOnce(
    webhook: WebhookRecord,
    body: string,
    deliveryId: string,
  ): Promise<{ ok: boolean; status?: number; error?: string }> {
    const timestamp = Math.floor(Date.now() / 1000);
    const headers: Record<string, string> = {
      'content-type': 'application/json',
      'user-agent': 'jobhook-gateway-simulator',
      'webhook-id': deliveryId,
      'webhook-timestamp': String(timestamp),
    };
    if (webhook.secret_key !== undefined) {
      Object.assign(headers, signer.sign!({ secret: webhook.secret_key, body, id: deliveryId, timestamp }));
    }
    const closing = activity.closeSignal();
    try {
      const status = await post(webhook.url, headers, body, options.deliveryTimeoutMs, closing.signal);
      if (status >= 200 && status < 300) return { ok: true, status };
      return { ok: false, status, error: `HTTP ${status}` };
    } catch (error) {
      return {
        ok: false,
        error: error instanceof TimeoutError ? error.message : `connection failed: ${describe(error)}`,
      };
    } finally {
      closing.dispose();
    }
  }

  return { dispatch };
}

class TimeoutError extends Error {}

/**
 * One POST on a fresh connection (no keep-alive): a test's receiver server can then close at
 * once, instead of waiting for an idle connection the simulator would otherwise hold open.
 * Resolves with the status once the whole answer is read; redirects are not followed.
 */
function post(
  url: string,
  headers: Record<string, string>,
  body: string,
  timeoutMs: number,
  signal: AbortSignal,
) {
  return new Promise<number>((resolve, reject) => {
    const send = url.startsWith('https:') ? httpsRequest : httpRequest;
    const req = send(url, {
      method: 'POST',
      agent: false,
      headers: { ...headers, 'content-length': String(Buffer.byteLength(body)) },
      signal,
    });
    const timer = setTimeout(
      () => req.destroy(new TimeoutError(`timed out after ${timeoutMs} ms`)),
      timeoutMs,
    );
    req.on('response', (res) => {
      res.resume();
      res.on('end', () => {
        clearTimeout(timer);
        resolve(res.statusCode ?? 0);
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

function describe(error: unknown): string {
  const code = (error as { code?: unknown }).code;
  if (typeof code === 'string') return code;
  return error instanceof Error ? error.message : String(error);
}
