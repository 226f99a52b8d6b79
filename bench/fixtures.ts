/** Deliveries for every scheme the benchmarks compare, built from one payload per size. */
import { createHmac, randomBytes } from 'node:crypto';

/** Standard Webhooks secret (jobhook, standardwebhooks, svix): base64 key bytes after `whsec_`. */
export const KEY = Buffer.from('6a6f62686f6f6b2d62656e63682d7365637265742d6b65792d33322d6279746573', 'hex');
export const SECRET = `whsec_${KEY.toString('base64')}`;
/** Octokit and Stripe use the secret string's UTF-8 bytes as the key. */
export const PLAIN_SECRET = 'jobhook-bench-plain-secret';

export const KB = 1024;
export const MB = 1024 * 1024;

/**
 * A valid `job.completed` delivery of about `size` bytes. Above the base size the payload grows by
 * a `data.outputs` array of small objects, the shape of a real large payload (JSON.parse work grows
 * with it), not one long string.
 */
export function jobCompletedBody(size: number): Buffer {
  const base = {
    id: TEMPLATE_EVENT_ID,
    type: 'job.completed',
    created_at: '2026-11-21T10:00:00Z',
    data: {
      task_id: 'task_01JBENCH000000000000000',
      status: 'completed',
      image_url: 'https://cdn.example.com/results/task_01JBENCH000000000000000/output.png',
      outputs: [] as { index: number; url: string; width: number; height: number; seed: number }[],
    },
  };
  let index = 0;
  const item = () => ({
    index,
    url: `https://cdn.example.com/results/task_01JBENCH/variant-${index}.png`,
    width: 1024,
    height: 768,
    seed: 100_000 + index++,
  });
  // Add items while they fit, then pad a string field so the size is exactly `size` (when it can be).
  let length = JSON.stringify(base).length + ',"note":""'.length;
  for (;;) {
    const next = item();
    const added = JSON.stringify(next).length + (base.data.outputs.length > 0 ? 1 : 0);
    if (length + added > size) break;
    base.data.outputs.push(next);
    length += added;
  }
  const text = JSON.stringify(base);
  const pad = Math.max(0, size - text.length - ',"note":""'.length);
  const padded = JSON.stringify({ ...base, data: { ...base.data, note: 'x'.repeat(pad) } });
  return Buffer.from(padded, 'utf8');
}

/** The event id and task id of every `jobCompletedBody`: {@link withFreshEventId} rewrites both. */
const TEMPLATE_EVENT_ID = 'evt_01JBENCH0000000000000000';
const TEMPLATE_TASK_ID = 'task_01JBENCH000000000000000';
const EVENT_ID_OFFSET = '{"id":"'.length;
/** Per process, so that the bench's processes never share an id. */
const ID_PREFIX = randomBytes(4).toString('hex');
let eventCounter = 0;

/**
 * A copy of `body` (a `jobCompletedBody`) as a fresh event: a new event id and a new task id, of
 * the same lengths. jobhook deduplicates by the payload's own `id`, so a delivery that repeated
 * the body would take the duplicate path (answer 200 at once, no handler, nothing stored) instead
 * of the real one; and each real event is about another task (the receiver keeps recent results
 * by task id).
 */
export function withFreshEventId(body: Buffer): Buffer {
  const serial = `${ID_PREFIX}${String(eventCounter++).padStart(16, '0')}`;
  const copy = Buffer.from(body);
  copy.write(`evt_${serial}`, EVENT_ID_OFFSET, 'latin1');
  copy.write(
    `task_${serial.slice(1)}`,
    copy.indexOf(`"task_id":"${TEMPLATE_TASK_ID}"`) + '"task_id":"'.length,
    'latin1',
  );
  return copy;
}

export function freshId(): string {
  return `msg_${randomBytes(12).toString('hex')}`;
}

export function nowSeconds(): number {
  return Math.floor(Date.now() / 1000);
}

/** Standard Webhooks v1 headers, signed with node:crypto (the bench's own signer, not jobhook's). */
export function standardHeaders(body: Uint8Array, id = freshId(), timestamp = nowSeconds()) {
  const signature = createHmac('sha256', KEY).update(`${id}.${timestamp}.`).update(body).digest('base64');
  return {
    'content-type': 'application/json',
    'webhook-id': id,
    'webhook-timestamp': String(timestamp),
    'webhook-signature': `v1,${signature}`,
  };
}

/** The same headers under Svix's names. */
export function svixHeaders(body: Uint8Array, id = freshId(), timestamp = nowSeconds()) {
  const standard = standardHeaders(body, id, timestamp);
  return {
    'svix-id': standard['webhook-id'],
    'svix-timestamp': standard['webhook-timestamp'],
    'svix-signature': standard['webhook-signature'],
  };
}

/** GitHub's scheme (@octokit/webhooks): `sha256=<hex>` of the body alone. */
export function githubHeaders(body: Uint8Array, id = freshId()) {
  return {
    'content-type': 'application/json',
    'x-github-event': 'ping',
    'x-github-delivery': id,
    'x-hub-signature-256': `sha256=${createHmac('sha256', PLAIN_SECRET).update(body).digest('hex')}`,
  };
}

/** Stripe's scheme: `t=<ts>,v1=<hex>` of `${ts}.${body}`. */
export function stripeHeader(body: Uint8Array, timestamp = nowSeconds()): string {
  const hex = createHmac('sha256', PLAIN_SECRET).update(`${timestamp}.`).update(body).digest('hex');
  return `t=${timestamp},v1=${hex}`;
}

/**
 * n Standard Webhooks deliveries of `body`, each a fresh event (its own payload id and delivery
 * id), so that jobhook's dedupe store does its real work: claim, complete, evict.
 */
export function standardDeliveries(body: Buffer, n: number) {
  return Array.from({ length: n }, () => {
    const fresh = withFreshEventId(body);
    return { headers: standardHeaders(fresh), body: fresh };
  });
}

/** The same deliveries with the body as a string, as AWS Lambda and most serverless platforms hand it. */
export function stringDeliveries(body: Buffer, n: number) {
  return standardDeliveries(body, n).map(({ headers, body: bytes }) => ({
    headers,
    body: bytes.toString('utf8'),
  }));
}

export function sizeLabel(bytes: number): string {
  return bytes >= 1_000_000 ? `${(bytes / 1_000_000).toFixed(0)} MB` : `${Math.round(bytes / KB)} KB`;
}
