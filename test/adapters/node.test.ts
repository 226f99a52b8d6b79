// Node-specific cases: the `path` option, connect-style `next`, and clients that go away mid-upload.
import { once } from 'node:events';
import { createServer, request, type IncomingMessage, type ServerResponse } from 'node:http';
import express from 'express';
import { expressHandler } from 'jobhook/express';
import { nodeHandler } from 'jobhook/node';
import { signDelivery } from 'jobhook/testing';
import { afterEach, describe, expect, it } from 'vitest';
import { completed, type JsonAnswer, recordingReceiver, SECRET } from './fixtures.js';
import { listen, type Running } from './http.js';

let server: Running | undefined;
afterEach(() => server?.close());

async function post(url: string, payload: object = completed()) {
  const delivery = signDelivery({ secret: SECRET, payload });
  const response = await fetch(url, {
    method: 'POST',
    headers: delivery.headers,
    body: delivery.body as BodyInit,
  });
  return { status: response.status, body: (await response.json()) as JsonAnswer };
}

describe('nodeHandler with `path`', () => {
  it('answers that path, with or without a query string, and 404 elsewhere on its own server', async () => {
    const rec = recordingReceiver();
    server = await listen(createServer(nodeHandler(rec.receiver, { path: '/webhooks' })));
    expect((await post(`${server.origin}/webhooks`)).status).toBe(200);
    expect((await post(`${server.origin}/webhooks?source=gateway`)).status).toBe(200);
    const elsewhere = await post(`${server.origin}/webhooks/other`);
    expect(elsewhere).toMatchObject({ status: 404, body: { error: { code: 'not_found' } } });
    // A path that only starts like it is another path.
    expect((await post(`${server.origin}/webhooks2`)).status).toBe(404);
    expect((await post(`${server.origin}/webhook`)).status).toBe(404);
    expect(rec.calls.filter((call) => call.type === 'job.completed')).toHaveLength(2);
  });

  it('passes other paths to next() as connect-style middleware', async () => {
    const rec = recordingReceiver();
    const app = express()
      .use(nodeHandler(rec.receiver, { path: '/webhooks' }))
      .post('/orders', (_req, res) => void res.json({ route: 'orders' }));
    server = await listen(app);
    expect(await post(`${server.origin}/orders`)).toEqual({ status: 200, body: { route: 'orders' } });
    expect((await post(`${server.origin}/webhooks`)).status).toBe(200);
    expect(rec.calls.filter((call) => call.type === 'job.completed')).toHaveLength(1);
  });

  it('matches `path` in full or relative to an Express mount point, and nothing else under it', async () => {
    const rec = recordingReceiver();
    const app = express()
      .use('/api', nodeHandler(rec.receiver, { path: '/api/webhooks' }))
      .use('/v2', nodeHandler(rec.receiver, { path: '/webhooks' }));
    server = await listen(app);
    expect((await post(`${server.origin}/api/webhooks`)).status).toBe(200);
    expect((await post(`${server.origin}/api/webhooks?x=1`)).status).toBe(200);
    expect((await post(`${server.origin}/v2/webhooks`)).status).toBe(200);
    // The mount's other paths still fall through to Express (its 404 page, not jobhook's JSON).
    expect((await fetch(`${server.origin}/api/other`, { method: 'POST' })).status).toBe(404);
    expect(rec.calls.filter((call) => call.type === 'job.completed')).toHaveLength(3);
  });

  it('answers 500 naming the fix when a body parser earlier in the chain consumed the body', async () => {
    const rec = recordingReceiver();
    server = await listen(
      express()
        .use(express.json())
        .use(nodeHandler(rec.receiver, { path: '/webhooks' })),
    );
    const { status, body } = await post(`${server.origin}/webhooks`);
    expect(status).toBe(500);
    expect(body.error?.code).toBe('body_unavailable');
    expect(rec.calls).toEqual([]);
    expect(rec.errors.join('\n')).toMatch(
      /in Node before .*call nodeHandler before any middleware that reads the body/,
    );
  });
});

describe.each([
  { name: 'nodeHandler', handler: nodeHandler },
  { name: 'expressHandler', handler: expressHandler },
])('$name when the client aborts mid-upload', ({ handler }) => {
  it('does not crash, runs nothing, and answers the next delivery', async () => {
    const rec = recordingReceiver();
    const listener = handler(rec.receiver) as (req: IncomingMessage, res: ServerResponse) => void;
    let arrived!: () => void;
    const requestArrived = new Promise<void>((resolve) => (arrived = resolve));
    const responses: ServerResponse[] = [];
    server = await listen(
      createServer((req, res) => {
        responses.push(res);
        listener(req, res);
        arrived();
      }),
    );

    const { headers } = signDelivery({ secret: SECRET, payload: completed() });
    const aborted = request(`${server.origin}/webhooks`, {
      method: 'POST',
      headers: { ...headers, 'content-length': '1000' },
    });
    aborted.on('error', () => undefined);
    aborted.write('{"type":"job.completed"');
    await requestArrived;
    aborted.destroy();
    await once(responses[0]!, 'close');

    expect((await post(`${server.origin}/webhooks`)).status).toBe(200);
    expect(rec.calls.filter((call) => call.type === 'job.completed')).toHaveLength(1);
    expect(rec.errors).toEqual([]);
  });
});
