// Express-specific cases: what happens when another middleware reads the body first.
import express5 from 'express';
import express4 from 'express4';
import { expressHandler, keepRawBody } from 'jobhook/express';
import { signDelivery } from 'jobhook/testing';
import { afterEach, describe, expect, it } from 'vitest';
import { completed, type JsonAnswer, recordingReceiver, SECRET } from './fixtures.js';
import { listen, type Running } from './http.js';

type Express = typeof express5;

describe.each([
  { name: 'express 5', express: express5 },
  { name: 'express 4', express: express4 },
])('$name', ({ express }) => {
  let server: Running | undefined;
  afterEach(() => server?.close());

  async function start(
    mount: (app: ReturnType<Express>, handler: ReturnType<typeof expressHandler>) => void,
  ) {
    const rec = recordingReceiver();
    const app = express();
    mount(app, expressHandler(rec.receiver));
    server = await listen(app);
    const send = async (delivery = signDelivery({ secret: SECRET, payload: completed() })) => {
      const response = await fetch(`${server!.origin}/webhooks`, {
        method: 'POST',
        headers: delivery.headers,
        body: delivery.body as BodyInit,
      });
      return { status: response.status, body: (await response.json()) as JsonAnswer };
    };
    return { rec, send };
  }

  it("answers 500 briefly, and logs Express's fix once as a sentence, when express.json() consumed the body first", async () => {
    const { rec, send } = await start((app, handler) => app.use(express.json()).post('/webhooks', handler));
    for (let attempt = 0; attempt < 2; attempt++) {
      const { status, body } = await send();
      expect(status).toBe(500);
      expect(body.error).toEqual({
        code: 'body_unavailable',
        message:
          "The receiver could not read the request's raw body, so its signature cannot be checked; retry later.",
      });
    }
    expect(rec.calls).toEqual([]);
    const logged = rec.errors.filter((line) => line.includes('consumed'));
    expect(logged).toHaveLength(1);
    const [line] = logged;
    expect(line).toMatch(/^jobhook: the request body was consumed by a body parser in Express before /);
    expect(line).toMatch(/before any body parser/);
    expect(line).toMatch(/express\.json\(\{ verify: keepRawBody \}\)/);
    expect(line).not.toMatch(/express\.raw/); // does nothing after a global parser
    expect(line).not.toMatch(/Hono|c\.req|Koa|koaHandler/); // only this framework's fix
    expect(line).not.toMatch(/[{]"ok"|"error"/); // a sentence, not the answer's JSON
  });

  it('answers 500 rather than verify a text body express.text() decoded', async () => {
    const { rec, send } = await start((app, handler) =>
      app.use(express.text({ type: '*/*' })).post('/webhooks', handler),
    );
    const { status, body } = await send();
    expect(status).toBe(500);
    expect(body.error?.code).toBe('body_unavailable');
    expect(rec.calls).toEqual([]);
  });

  it("reads the stream itself when express.json() skipped the request's content type", async () => {
    const { rec, send } = await start((app, handler) => app.use(express.json()).post('/webhooks', handler));
    const payload = completed();
    const delivery = signDelivery({ secret: SECRET, payload });
    delivery.headers['content-type'] = 'application/octet-stream';
    expect((await send(delivery)).status).toBe(200);
    expect(rec.calls[0]).toEqual({ type: 'job.completed', event: payload });
  });

  it('verifies the Buffer express.raw() left on req.body', async () => {
    const { rec, send } = await start((app, handler) =>
      app.post('/webhooks', express.raw({ type: '*/*' }), handler),
    );
    const payload = completed();
    expect((await send(signDelivery({ secret: SECRET, payload }))).status).toBe(200);
    expect(rec.calls[0]).toEqual({ type: 'job.completed', event: payload });
  });

  it('verifies req.rawBody kept by a body parser’s verify hook', async () => {
    const { rec, send } = await start((app, handler) =>
      app
        .use(express.json({ verify: (req, _res, buf) => Object.assign(req, { rawBody: buf }) }))
        .post('/webhooks', handler),
    );
    // Bytes a re-serialised req.body would not reproduce: spacing and key order.
    const body =
      '{ "type": "job.completed",  "id": "evt_raw", "created_at": "2026-11-21T10:00:00Z", "data": {"task_id": "t", "status": "completed", "image_url": "https://img.example/1.png"} }';
    const { status } = await send(signDelivery({ secret: SECRET, payload: body }));
    expect(status).toBe(200);
    expect(rec.calls[0]).toMatchObject({ type: 'job.completed', event: { id: 'evt_raw' } });
  });

  // The fixes as README.md and the body_unavailable message give them.
  it('verifies what keepRawBody kept, after a global express.json({ verify: keepRawBody })', async () => {
    const { rec, send } = await start((app, handler) =>
      app.use(express.json({ verify: keepRawBody })).post('/webhooks', handler),
    );
    const payload = completed();
    expect(await send(signDelivery({ secret: SECRET, payload }))).toEqual({
      status: 200,
      body: { ok: true },
    });
    expect(rec.calls[0]).toEqual({ type: 'job.completed', event: payload });
  });

  it('gets nothing from express.raw() on the route after a global express.json(): not a fix', async () => {
    const { rec, send } = await start((app, handler) =>
      app.use(express.json()).post('/webhooks', express.raw({ type: '*/*' }), handler),
    );
    expect((await send()).body.error?.code).toBe('body_unavailable');
    expect(rec.calls).toEqual([]);
  });

  it('answers deliveries when mounted before auth middleware that refuses the rest', async () => {
    const { rec, send } = await start((app, handler) =>
      app
        .post('/webhooks', handler)
        .use((_req, res) => void res.status(401).json({ error: { code: 'login_required', message: '' } })),
    );
    expect((await send()).status).toBe(200);
    expect(rec.calls).toHaveLength(2);
  });
});
