// Koa-specific cases: @koa/bodyparser running first, `path`, and the app's other routes.
import { bodyParser } from '@koa/bodyparser';
import { koaHandler } from 'jobhook/koa';
import { signDelivery } from 'jobhook/testing';
import Koa from 'koa';
import { afterEach, describe, expect, it } from 'vitest';
import { completed, type JsonAnswer, recordingReceiver, SECRET } from './fixtures.js';
import { listen, type Running } from './http.js';

describe('koaHandler', () => {
  let server: Running | undefined;
  afterEach(() => server?.close());

  async function post(path: string, body: string | Uint8Array, headers: Record<string, string>) {
    const response = await fetch(`${server!.origin}${path}`, {
      method: 'POST',
      headers,
      body: body as BodyInit,
    });
    return { status: response.status, body: (await response.json()) as JsonAnswer };
  }

  it('verifies ctx.request.rawBody when @koa/bodyparser ran first, and other routes keep their parsed JSON', async () => {
    const rec = recordingReceiver();
    const app = new Koa()
      .use(bodyParser())
      .use(koaHandler(rec.receiver, { path: '/webhooks' }))
      .use((ctx) => {
        ctx.body = { route: (ctx.request.body as { route: string }).route };
      });
    server = await listen(app.callback());
    const payload = completed();
    const delivery = signDelivery({ secret: SECRET, payload });
    expect(await post('/webhooks', delivery.body, delivery.headers)).toEqual({
      status: 200,
      body: { ok: true },
    });
    expect(rec.calls[0]).toEqual({ type: 'job.completed', event: payload });

    const forged = signDelivery({ secret: 'another-secret', payload: completed() });
    expect((await post('/webhooks', forged.body, forged.headers)).status).toBe(401);

    const other = await post('/other', '{"route":"other"}', { 'content-type': 'application/json' });
    expect(other).toEqual({ status: 200, body: { route: 'other' } });
  });

  it('reads the stream itself when the parser skipped the content type', async () => {
    const rec = recordingReceiver();
    server = await listen(new Koa().use(bodyParser()).use(koaHandler(rec.receiver)).callback());
    const delivery = signDelivery({ secret: SECRET, payload: completed() });
    const headers = { ...delivery.headers, 'content-type': 'application/octet-stream' };
    expect((await post('/anywhere', delivery.body, headers)).status).toBe(200);
    expect(rec.calls).toHaveLength(2);
  });
});
