// Fastify-specific cases: the plugin's scope leaves the app's parsers alone, and `path`/`prefix`.
import Fastify, { type FastifyInstance } from 'fastify';
import { fastifyPlugin } from 'jobhook/fastify';
import { signDelivery } from 'jobhook/testing';
import { afterEach, describe, expect, it } from 'vitest';
import { completed, type JsonAnswer, recordingReceiver, SECRET } from './fixtures.js';

describe('fastifyPlugin', () => {
  const apps: FastifyInstance[] = [];
  afterEach(async () => {
    await Promise.all(apps.splice(0).map((app) => app.close()));
  });

  async function start(mount: (app: FastifyInstance) => PromiseLike<unknown>) {
    const app = Fastify();
    apps.push(app);
    await mount(app);
    const origin = await app.listen({ port: 0, host: '127.0.0.1' });
    return async (path: string, body: string | Uint8Array, headers: Record<string, string>) => {
      const response = await fetch(`${origin}${path}`, { method: 'POST', headers, body: body as BodyInit });
      return { status: response.status, body: (await response.json()) as JsonAnswer };
    };
  }

  it("adds /webhooks in its own scope: the app's routes keep their JSON parsing", async () => {
    const rec = recordingReceiver();
    const post = await start(async (app) => {
      app.post('/other', async (request) => ({ route: (request.body as { route: string }).route }));
      await app.register(fastifyPlugin(rec.receiver));
    });
    const payload = completed();
    const delivery = signDelivery({ secret: SECRET, payload });
    expect(await post('/webhooks', delivery.body, delivery.headers)).toEqual({
      status: 200,
      body: { ok: true },
    });
    expect(rec.calls[0]).toEqual({ type: 'job.completed', event: payload });
    const other = await post('/other', '{"route":"other"}', { 'content-type': 'application/json' });
    expect(other).toEqual({ status: 200, body: { route: 'other' } });
  });

  it('mounts at `path` under the register prefix', async () => {
    const rec = recordingReceiver();
    const post = await start((app) =>
      app.register(fastifyPlugin(rec.receiver, { path: '/gateway' }), { prefix: '/hooks' }),
    );
    const delivery = signDelivery({ secret: SECRET, payload: completed() });
    expect((await post('/hooks/gateway', delivery.body, delivery.headers)).status).toBe(200);
    expect((await post('/webhooks', delivery.body, delivery.headers)).status).toBe(404);
  });

  it('takes `path` from register options too, and refuses two different paths', async () => {
    const rec = recordingReceiver();
    const post = await start((app) => app.register(fastifyPlugin(rec.receiver), { path: '/hooks/gateway' }));
    const delivery = signDelivery({ secret: SECRET, payload: completed() });
    expect((await post('/hooks/gateway', delivery.body, delivery.headers)).status).toBe(200);
    expect((await post('/webhooks', delivery.body, delivery.headers)).status).toBe(404);

    const app = Fastify();
    apps.push(app);
    app.register(fastifyPlugin(rec.receiver, { path: '/a' }), { path: '/b' });
    await expect(app.ready()).rejects.toMatchObject({ code: 'invalid_options' });
  });
});
