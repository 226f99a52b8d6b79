// Hono-specific cases: app.request() without a server, typing, and middleware that read the body.
import { Hono, type Handler } from 'hono';
import { honoHandler } from 'jobhook/hono';
import { signDelivery } from 'jobhook/testing';
import { describe, expect, it } from 'vitest';
import { completed, type JsonAnswer, LIMIT, recordingReceiver, SECRET } from '../conformance/fixtures.js';

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
    expect(rec.errors.filter((line) => line.includes('consumed'))).toHaveLength(1);
  });

  it('verifies the raw bytes a middleware cached with c.req.arrayBuffer()', async () => {
    const rec = recordingReceiver();
    const app = new Hono()
      .use(async (c, next) => {
        await c.req.arrayBuffer();
        await next();
      })
      .post('/webhooks', honoHandler(rec.receiver));
    const payload = completed();
    expect((await send(app, signDelivery({ secret: SECRET, payload }))).status).toBe(200);
    expect(rec.calls[0]).toEqual({ type: 'job.completed', event: payload });
  });
});
