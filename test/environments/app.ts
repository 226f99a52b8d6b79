/**
 * The app each runtime serves, as source text written next to the packed package: plain
 * JavaScript with no runtime-specific call, so one module runs on workerd, the Edge Runtime, Deno
 * and Bun. It imports jobhook by its public names, the way a user's app does.
 */

/** A Standard Webhooks secret: `whsec_` and base64 of 32 bytes (btoa, not test/fixtures.ts: this app runs on workerd, Deno and Bun). */
export const SECRET = `whsec_${btoa('jobhook runtimes test secret 32b')}`;

/**
 * `default.fetch` answers:
 * - `POST /webhooks`: `receiver.fetch`; `POST /hono`: a Hono app with `honoHandler` (its own receiver).
 * - `GET /seen`: the task ids the handlers saw, in order.
 * - `GET /self`: signs a delivery on the runtime itself (`jobhook/testing`) and receives it.
 * - `GET /logs`: what the receivers logged (a `job.failed` handler throws an error quoting the secret).
 */
export const appSource = `
import { Hono } from 'hono';
import { createReceiver } from 'jobhook';
import { honoHandler } from 'jobhook/hono';
import { signDelivery } from 'jobhook/testing';

const secret = ${JSON.stringify(SECRET)};
const seen = [];
const logs = [];
const logger = { error: (line) => logs.push(line), warn: (line) => logs.push(line) };

function receiver(label) {
  return createReceiver({ secret, logger })
    .onJobCompleted((event) => { seen.push(label + ':' + event.data.task_id); })
    .onJobFailed(() => { throw new Error('the handler quoted ' + secret); });
}

const plain = receiver('fetch');
const hono = new Hono().post('/hono', honoHandler(receiver('hono')));

async function self() {
  const delivery = await signDelivery({ secret, payload: {
    id: 'evt_self', type: 'job.completed', created_at: '2026-11-21T10:00:00Z',
    data: { task_id: 'task_self', status: 'completed', image_url: 'https://x.test/self.png' },
  } });
  const answer = await plain.fetch(new Request('http://127.0.0.1/webhooks', {
    method: 'POST', headers: delivery.headers, body: delivery.body,
  }));
  return Response.json({ status: answer.status });
}

export default {
  async fetch(request) {
    const { pathname } = new URL(request.url);
    if (pathname === '/webhooks') return plain.fetch(request);
    if (pathname === '/hono') return hono.fetch(request);
    if (pathname === '/seen') return Response.json(seen);
    if (pathname === '/self') return self();
    if (pathname === '/logs') return Response.json(logs);
    return new Response('not found', { status: 404 });
  },
};
`;

/** Vercel's Edge Runtime runs a script that listens for `fetch` events, as Next.js compiles one. */
export const edgeEntrySource = `
import app from './app.mjs';
addEventListener('fetch', (event) => event.respondWith(app.fetch(event.request)));
`;

/** Serves `module`'s default export with Deno.serve on 127.0.0.1 and prints the port. */
export const denoServerSource = (module: string) => `
import app from ${JSON.stringify(module)};
Deno.serve({ hostname: '127.0.0.1', port: 0, onListen: ({ port }) => console.log('listening ' + port) }, app.fetch);
`;

/** Serves `module`'s default export with Bun.serve on 127.0.0.1 and prints the port. */
export const bunServerSource = (module: string) => `
import app from ${JSON.stringify(module)};
const server = Bun.serve({ hostname: '127.0.0.1', port: 0, fetch: app.fetch });
console.log('listening ' + server.port);
`;
