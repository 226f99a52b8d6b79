// reconcileOnce() as a cron calls it, on the packed package bundled for Workers (workerd through
// Miniflare, its `scheduled` handler) and for Vercel's Edge Runtime (a route a cron requests),
// against the gateway simulator in this process: the outcome of a task whose webhook never came
// is found by one pass and handled with `source: 'poll'`; no timer is started (intervalMs: 0).
import { rm } from 'node:fs/promises';
import { Miniflare } from 'miniflare';
import { createClient } from 'jobhook/client';
import { startGateway, type Gateway } from 'jobhook/testing';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { EDGE, WORKERS, bundle } from '../environments/web-bundles.js';
import { packedProject } from '../environments/packed.js';
import { BUILD_TIMEOUT_MS } from '../support/dist.js';
import { serveEdge } from '../environments/servers.js';
import { SECRET } from '../environments/app.js';

let gateway: Gateway;
let dir: string;
let workerBundle: string;
let edgeBundle: string;

const appSource = (baseUrl: string, apiKey: string) => `
import { createReceiver, memoryJobTracker } from 'jobhook';
import { createClient } from 'jobhook/client';

const jobs = memoryJobTracker();
const seen = [];
const receiver = createReceiver({
  secret: ${JSON.stringify(SECRET)},
  reconcile: { client: createClient({ baseUrl: ${JSON.stringify(baseUrl)}, apiKey: ${JSON.stringify(apiKey)} }), jobs, afterMs: 0, intervalMs: 0 },
}).onJobCompleted((event, context) => { seen.push(context.source + ':' + event.data.task_id); });
let last;

export default {
  async fetch(request) {
    const url = new URL(request.url);
    if (url.pathname === '/track') { await jobs.track(url.searchParams.get('task')); return Response.json({ ok: true }); }
    if (url.pathname === '/cron') return Response.json(await receiver.reconcileOnce());
    if (url.pathname === '/last') return Response.json(last ?? null);
    if (url.pathname === '/seen') return Response.json(seen);
    return new Response('not found', { status: 404 });
  },
  async scheduled(event, env, context) {
    context.waitUntil(receiver.reconcileOnce().then((result) => { last = result; }));
  },
};
`;

beforeAll(async () => {
  gateway = await startGateway({ jobs: { stepMs: 1 } });
  dir = await packedProject({
    'app.mjs': appSource(gateway.baseUrl, gateway.apiKey),
    'edge-entry.mjs': `import app from './app.mjs';\naddEventListener('fetch', (event) => event.respondWith(app.fetch(event.request)));\n`,
  });
  [workerBundle, edgeBundle] = await Promise.all([
    bundle(dir, 'app.mjs', 'worker.bundle.mjs', { conditions: WORKERS, format: 'esm' }),
    bundle(dir, 'edge-entry.mjs', 'edge.bundle.js', { conditions: EDGE, format: 'iife' }),
  ]);
}, BUILD_TIMEOUT_MS);
afterAll(async () => {
  await gateway?.close();
  await rm(dir, { recursive: true, force: true });
});

/** A finished task the worker never heard of by webhook. */
async function finishedTask(): Promise<string> {
  const client = createClient({ baseUrl: gateway.baseUrl, apiKey: gateway.apiKey });
  const { task_id } = await client.images.generate({ model: 'm', prompt: 'a cat' });
  await gateway.settled();
  return task_id;
}

it('on workerd, a scheduled event runs one pass that handles the outcome by poll', async () => {
  const miniflare = new Miniflare({
    modules: true,
    script: workerBundle,
    compatibilityDate: '2025-09-01',
    compatibilityFlags: [],
    cf: false,
  });
  try {
    // Miniflare's worker types are workerd's; this test needs fetch and scheduled only.
    const worker = (await miniflare.getWorker()) as unknown as {
      fetch(url: string): Promise<Response>;
      scheduled(options: { cron: string }): Promise<{ outcome: string }>;
    };
    const task = await finishedTask();
    await worker.fetch(`http://worker/track?task=${task}`);
    const scheduled = await worker.scheduled({ cron: '*/5 * * * *' });
    expect(scheduled.outcome).toBe('ok');
    expect(await (await worker.fetch('http://worker/last')).json()).toEqual({
      polled: 1,
      dispatched: 1,
      pending: 0,
      rateLimited: false,
    });
    expect(await (await worker.fetch('http://worker/seen')).json()).toEqual([`poll:${task}`]);
  } finally {
    await miniflare.dispose();
  }
}, 60_000);

it('on the Edge Runtime, a cron route runs one pass that handles the outcome by poll', async () => {
  const served = await serveEdge(edgeBundle);
  try {
    const task = await finishedTask();
    await fetch(`${served.url}/track?task=${task}`);
    expect(await (await fetch(`${served.url}/cron`)).json()).toEqual({
      polled: 1,
      dispatched: 1,
      pending: 0,
      rateLimited: false,
    });
    expect(await (await fetch(`${served.url}/seen`)).json()).toEqual([`poll:${task}`]);
    // A second pass finds nothing to do.
    expect(await (await fetch(`${served.url}/cron`)).json()).toMatchObject({ polled: 0 });
  } finally {
    await served.stop();
  }
}, 60_000);
