// The packed package on every Web runtime, with no flags: workerd (Miniflare, no nodejs_compat),
// Vercel's Edge Runtime, Deno and Bun. Each serves the same app (app.ts) on 127.0.0.1 and gets the
// same deliveries, signed here: valid (200, handler ran), tampered (401), duplicate (200), through
// receiver.fetch and through honoHandler; plus signDelivery on the runtime itself and a log line
// that would quote the secret. Workers and Edge run the package as their tooling bundles it (the
// Web form of `#runtime`); Deno and Bun load it from node_modules (they pick the node:crypto form,
// faster there) and also run the Workers bundle, so the Web form is tested on their engines too.
import { randomBytes } from 'node:crypto';
import { rm } from 'node:fs/promises';
import { signDelivery } from 'jobhook/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { completedPayload, failedPayload } from '../fixtures.js';
import { SECRET, appSource, bunServerSource, denoServerSource, edgeEntrySource } from './app.js';
import { EDGE, WORKERS, bundle } from './web-bundles.js';
import { BUILD_TIMEOUT_MS } from '../support/dist.js';
import { packedProject } from './packed.js';
import { serveBun, serveDeno, serveEdge, serveWorkerd, type Served } from './servers.js';

let dir: string;
let workerBundle: string;
let edgeBundle: string;

beforeAll(async () => {
  dir = await packedProject({
    'app.mjs': appSource,
    'edge-entry.mjs': edgeEntrySource,
    'deno-server.mjs': denoServerSource('./app.mjs'),
    'deno-web-server.mjs': denoServerSource('./worker.bundle.mjs'),
    'bun-server.mjs': bunServerSource('./app.mjs'),
    'bun-web-server.mjs': bunServerSource('./worker.bundle.mjs'),
  });
  // Bundled once per run, as wrangler and Next.js would.
  [workerBundle, edgeBundle] = await Promise.all([
    bundle(dir, 'app.mjs', 'worker.bundle.mjs', { conditions: WORKERS, format: 'esm' }),
    bundle(dir, 'edge-entry.mjs', 'edge.bundle.js', { conditions: EDGE, format: 'iife' }),
  ]);
}, BUILD_TIMEOUT_MS);
afterAll(() => rm(dir, { recursive: true, force: true }));

it('bundles for Workers and Edge without a single node: import or Buffer', () => {
  for (const text of [workerBundle, edgeBundle]) {
    expect(text).not.toMatch(/from\s*["']node:|require\(["']node:|import\(["']node:/);
    expect(text).not.toMatch(/\bBuffer\.|\bsetImmediate\(/);
    expect(text).toContain('crypto.subtle');
  }
});

const runtimes: [string, () => Promise<Served>][] = [
  ['workerd (Miniflare, no nodejs_compat)', () => serveWorkerd(workerBundle)],
  ['the Edge Runtime (edge-runtime)', () => serveEdge(edgeBundle)],
  ['Deno, the package from node_modules', () => serveDeno(dir, 'deno-server.mjs')],
  ['Deno, the Workers bundle', () => serveDeno(dir, 'deno-web-server.mjs')],
  ['Bun, the package from node_modules', () => serveBun(dir, 'bun-server.mjs')],
  ['Bun, the Workers bundle', () => serveBun(dir, 'bun-web-server.mjs')],
];

describe.each(runtimes)('on %s', (_name, serve) => {
  let served: Served;
  beforeAll(async () => {
    served = await serve();
  }, 30_000);
  afterAll(() => served?.stop());

  const get = async (path: string) => (await fetch(`${served.url}${path}`)).json();

  it.each([
    ['receiver.fetch', 'webhooks', 'fetch'],
    ['honoHandler', 'hono', 'hono'],
  ])('%s: valid 200 and handled, tampered 401, duplicate 200', async (_mount, route, label) => {
    const payload = completedPayload();
    const delivery = signDelivery({ secret: SECRET, payload });
    const send = (body: string | Uint8Array<ArrayBuffer>) =>
      fetch(`${served.url}/${route}`, { method: 'POST', headers: delivery.headers, body });

    const tampered = await send(
      JSON.stringify({ ...payload, data: { ...payload.data, task_id: 'task_evil' } }),
    );
    expect(tampered.status).toBe(401);
    expect(await tampered.json()).toMatchObject({ ok: false, error: { code: 'invalid_signature' } });

    const valid = await send(delivery.body);
    expect(valid.status).toBe(200);
    expect(await valid.json()).toEqual({ ok: true });

    const duplicate = await send(delivery.body);
    expect(duplicate.status).toBe(200);
    expect(await duplicate.json()).toEqual({ ok: true, duplicate: true });

    const seen = (await get('/seen')) as string[];
    expect(seen.filter((entry) => entry === `${label}:${payload.data.task_id}`)).toHaveLength(1);
    expect(seen).not.toContain(`${label}:task_evil`);
  });

  it('refuses a header of more than 32 signatures, and finds the valid one among 32', async () => {
    const delivery = signDelivery({ secret: SECRET, payload: completedPayload() });
    const signed = delivery.headers['webhook-signature']!;
    const madeUp = Array.from({ length: 32 }, () => `v1,${randomBytes(32).toString('base64')}`);
    const send = (signatures: string[]) =>
      fetch(`${served.url}/webhooks`, {
        method: 'POST',
        headers: { ...delivery.headers, 'webhook-signature': signatures.join(' ') },
        body: delivery.body,
      });

    const flooded = await send([...madeUp, signed]);
    expect(flooded.status).toBe(401);
    expect(await flooded.json()).toMatchObject({ error: { message: 'A signature header is malformed.' } });
    const rotated = await send([...madeUp.slice(1), signed]);
    expect(rotated.status).toBe(200);
  });

  it('signs a delivery on the runtime itself (jobhook/testing) and receives it', async () => {
    expect(await get('/self')).toEqual({ status: 200 });
    expect(await get('/seen')).toContain('fetch:task_self');
  });

  it('redacts the secret from a log line that quotes it', async () => {
    const delivery = signDelivery({ secret: SECRET, payload: failedPayload() });
    const answer = await fetch(`${served.url}/webhooks`, {
      method: 'POST',
      headers: delivery.headers,
      body: delivery.body,
    });
    expect(answer.status).toBe(500);
    const logs = (await get('/logs')) as string[];
    expect(logs.some((line) => line.includes('the handler quoted [redacted]'))).toBe(true);
    expect(logs.join('\n')).not.toContain(SECRET.slice('whsec_'.length));
  });
});
