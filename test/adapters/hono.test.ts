// Hono-specific cases: app.request() without a server, typing, middleware that read the body, and
// the Node path on @hono/node-server.
import { once } from 'node:events';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { getRequestListener } from '@hono/node-server';
import { Hono, type Handler } from 'hono';
import { honoHandler } from 'jobhook/hono';
import { signDelivery } from 'jobhook/testing';
import { describe, expect, it } from 'vitest';
import {
  completed,
  type JsonAnswer,
  LIMIT,
  recordingReceiver,
  type RecordingReceiver,
  SECRET,
} from './fixtures.js';

async function send(
  app: { request(path: string, init: RequestInit): Response | Promise<Response> },
  delivery = signDelivery({ secret: SECRET, payload: completed() }),
) {
  const response = await app.request('/webhooks', {
    method: 'POST',
    headers: delivery.headers,
    body: delivery.body as BodyInit,
  });
  return { status: response.status, body: (await response.json()) as JsonAnswer };
}

/** An app whose middleware reads the body (and Hono caches its bytes) before `honoHandler` runs. */
function readingTheBodyFirst(receiver: RecordingReceiver['receiver']) {
  return new Hono()
    .use(async (c, next) => {
      await c.req.arrayBuffer();
      await next();
    })
    .post('/webhooks', honoHandler(receiver));
}

describe('honoHandler through app.request()', () => {
  it('answers valid, forged, oversized and non-POST requests as the core does', async () => {
    const rec = recordingReceiver();
    const handler: Handler = honoHandler(rec.receiver);
    const app = new Hono().all('/webhooks', handler);
    const payload = completed();
    expect(await send(app, signDelivery({ secret: SECRET, payload }))).toEqual({
      status: 200,
      body: { ok: true },
    });
    expect((await send(app, signDelivery({ secret: 'wrong', payload: completed() }))).status).toBe(401);
    const big = completed({ padding: 'x'.repeat(LIMIT) });
    expect((await send(app, signDelivery({ secret: SECRET, payload: big }))).status).toBe(413);
    expect((await app.request('/webhooks')).status).toBe(405);
    expect(rec.calls).toEqual([
      { type: 'job.completed', event: payload },
      { type: 'any', event: payload },
    ]);
  });

  it('fits apps with their own Env types', async () => {
    const rec = recordingReceiver();
    const app = new Hono<{ Variables: { requestId: string } }>();
    app.use(async (c, next) => {
      c.set('requestId', 'r1');
      await next();
    });
    app.post('/webhooks', honoHandler(rec.receiver));
    expect((await send(app)).status).toBe(200);
  });

  it('answers 500 naming the fix, logged once, when a middleware parsed the body as JSON first', async () => {
    const rec = recordingReceiver();
    const app = new Hono()
      .use(async (c, next) => {
        await c.req.json();
        await next();
      })
      .post('/webhooks', honoHandler(rec.receiver));
    for (let attempt = 0; attempt < 2; attempt++) {
      const { status, body } = await send(app);
      expect(status).toBe(500);
      expect(body.error?.code).toBe('body_unavailable');
    }
    expect(rec.calls).toEqual([]);
    const logged = rec.errors.filter((line) => line.includes('consumed'));
    expect(logged).toHaveLength(1);
    expect(logged[0]).toMatch(/in Hono before .* c\.req\.arrayBuffer\(\)/);
    expect(logged[0]).not.toMatch(/keepRawBody|koaHandler/);
  });

  it('verifies the raw bytes a middleware cached with c.req.arrayBuffer()', async () => {
    const rec = recordingReceiver();
    const app = readingTheBodyFirst(rec.receiver);
    const payload = completed();
    expect((await send(app, signDelivery({ secret: SECRET, payload }))).status).toBe(200);
    expect(rec.calls[0]).toEqual({ type: 'job.completed', event: payload });
  });
});

describe('honoHandler on @hono/node-server', () => {
  // Served over real HTTP: there `c.env.incoming` is Node's request, and the handler reads the
  // delivery from it (as the Node adapter does) rather than through the Web Request node-server
  // builds over it, which cost about a fifth of Hono's throughput (bench/NOTES.md).
  async function serveApp(app: Hono) {
    const server = createServer(getRequestListener(app.fetch));
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    const { port } = server.address() as AddressInfo;
    return {
      post: async (delivery: { headers: Record<string, string>; body: unknown }) => {
        const response = await fetch(`http://127.0.0.1:${port}/webhooks`, {
          method: 'POST',
          headers: delivery.headers,
          body: delivery.body as BodyInit,
        });
        return { status: response.status, body: (await response.json()) as JsonAnswer };
      },
      close: () => new Promise((resolve) => server.close(resolve)),
    };
  }

  it("reads the delivery from Node's request, and Hono's middleware still sees the answer", async () => {
    const rec = recordingReceiver();
    const seen: { status: number; bodyUsed: boolean; contentType: string | null }[] = [];
    const app = new Hono()
      .use(async (c, next) => {
        await next();
        seen.push({
          status: c.res.status,
          bodyUsed: c.req.raw.bodyUsed,
          contentType: c.res.headers.get('content-type'),
        });
      })
      .post('/webhooks', honoHandler(rec.receiver));
    const served = await serveApp(app);
    try {
      const payload = completed();
      const good = signDelivery({ secret: SECRET, payload });
      expect(await served.post(good)).toEqual({ status: 200, body: { ok: true } });
      const forged = signDelivery({
        secret: `whsec_${Buffer.from('another secret, 32 bytes long!!').toString('base64')}`,
        payload: completed(),
      });
      expect((await served.post(forged)).status).toBe(401);
      expect(rec.calls.filter((call) => call.type === 'job.completed')).toEqual([
        { type: 'job.completed', event: payload },
      ]);
      // The Web Request was left unread; the answers went back through Hono as Responses.
      expect(seen).toEqual([
        { status: 200, bodyUsed: false, contentType: 'application/json; charset=utf-8' },
        { status: 401, bodyUsed: false, contentType: 'application/json; charset=utf-8' },
      ]);
    } finally {
      await served.close();
    }
  });

  it('still verifies the bytes a middleware read first through the Web Request', async () => {
    const rec = recordingReceiver();
    const app = readingTheBodyFirst(rec.receiver);
    const served = await serveApp(app);
    try {
      const payload = completed();
      expect((await served.post(signDelivery({ secret: SECRET, payload }))).status).toBe(200);
      expect(rec.calls.filter((call) => call.type === 'job.completed')).toEqual([
        { type: 'job.completed', event: payload },
      ]);
    } finally {
      await served.close();
    }
  });
});
