// Starts each example as its own code would run and sends it signed deliveries over HTTP.
import { signDelivery } from 'jobhook/testing';
import { afterEach, describe, expect, it } from 'vitest';
import { start as startExpress } from '../../examples/express/server.js';
import { start as startHono } from '../../examples/hono/server.js';
import { start as startNode } from '../../examples/node/server.js';
import { completed, failed, SECRET } from '../adapters/fixtures.js';

const jobs = {
  path: '/jobs',
  init: { method: 'POST', body: '{"prompt":"a fox"}' },
  answer: { queued: 'a fox' },
};
const health = { path: '/health', init: { method: 'GET' }, answer: { ok: true } };

describe.each([
  { name: 'express', start: startExpress, route: jobs },
  { name: 'hono', start: startHono, route: jobs },
  { name: 'node', start: startNode, route: health },
])('examples/$name', ({ start, route }) => {
  let app: Awaited<ReturnType<typeof start>> | undefined;
  afterEach(() => app?.close());

  it('logs the typed events of signed deliveries and still serves its own route', async () => {
    const lines: string[] = [];
    app = await start({ port: 0, secret: SECRET, log: (line) => lines.push(line) });
    const done = completed();
    const fail = failed();
    for (const payload of [done, fail]) {
      const delivery = signDelivery({ secret: SECRET, payload });
      const response = await fetch(`${app.url}/webhooks`, {
        method: 'POST',
        headers: delivery.headers,
        body: delivery.body as BodyInit,
      });
      expect(response.status).toBe(200);
    }
    expect(lines).toEqual([
      `job ${done.data.task_id} completed: ${done.data.image_url}`,
      `job ${fail.data.task_id} failed: ${fail.data.error.message}`,
    ]);

    const forged = signDelivery({ secret: 'not-the-secret', payload: completed() });
    const rejected = await fetch(`${app.url}/webhooks`, {
      method: 'POST',
      headers: forged.headers,
      body: forged.body as BodyInit,
    });
    expect(rejected.status).toBe(401);
    expect(lines).toHaveLength(2);

    const own = await fetch(`${app.url}${route.path}`, {
      ...route.init,
      headers: { 'content-type': 'application/json' },
    });
    expect(await own.json()).toEqual(route.answer);
  });
});
