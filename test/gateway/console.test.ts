// The console's HTTP side without a browser: its page, JSON state, server-sent events and actions.
import { afterEach, describe, expect, test } from 'vitest';
import { createClient } from 'jobhook/client';
import { startGateway, type Gateway, type GatewayOptions } from 'jobhook/testing';
import { call, callWithHost, type Json } from './support.js';
import { SECRET, openEvents, serve, startReceiverApp } from './console-support.js';

const cleanups: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function start(options: GatewayOptions = {}): Promise<Gateway & { consoleUrl: string }> {
  const gateway = await startGateway({
    console: true,
    jobs: { stepMs: 1 },
    deliveries: { retryDelaysMs: [1, 1] },
    ...options,
  });
  cleanups.push(() => gateway.close());
  return gateway as Gateway & { consoleUrl: string };
}
async function receiverApp() {
  const app = await startReceiverApp();
  cleanups.push(app.close);
  return app;
}
async function register(gateway: Gateway, url: string) {
  const client = createClient({ apiKey: gateway.apiKey, baseUrl: gateway.baseUrl });
  const { status, json } = await call(gateway.baseUrl, 'POST', '/api/v1/webhooks', {
    apiKey: gateway.apiKey,
    body: { url, events: ['job.completed', 'job.failed'], secret_key: SECRET },
  });
  expect(status).toBe(200);
  return { client, webhookId: json.data.id as number };
}
/** A console action as the page sends it: same origin, JSON. */
function action(gateway: Gateway, path: string, body: unknown, headers: Record<string, string> = {}) {
  return call(gateway.baseUrl, 'POST', `/_console${path}`, {
    body,
    headers: { origin: gateway.baseUrl, ...headers },
  });
}
async function state(gateway: Gateway): Promise<Json> {
  const { status, json } = await call(gateway.baseUrl, 'GET', '/_console/state');
  expect(status).toBe(200);
  return json;
}

describe('the console is opt-in', () => {
  test('without console: true, /_console is not served and is left to the gateway API (401)', async () => {
    const gateway = await startGateway();
    cleanups.push(() => gateway.close());
    expect(gateway.consoleUrl).toBeUndefined();
    const { status, json } = await call(gateway.baseUrl, 'GET', '/_console/state');
    expect(status).toBe(401);
    expect(json).toMatchObject({ success: false, error: { code: 'unauthorized' } });
  });

  test('with it, the API under /api/v1 is unchanged and console requests are not in gateway.requests', async () => {
    const gateway = await start();
    expect(gateway.consoleUrl).toBe(`${gateway.baseUrl}/_console`);
    await call(gateway.baseUrl, 'GET', '/_console/state');
    const listed = await call(gateway.baseUrl, 'GET', '/api/v1/webhooks', { apiKey: gateway.apiKey });
    expect(listed).toMatchObject({ status: 200, json: { success: true, data: [] } });
    expect((await call(gateway.baseUrl, 'GET', '/api/v1/webhooks')).status).toBe(401);
    expect(gateway.requests.map((r) => r.path)).toEqual(['/api/v1/webhooks', '/api/v1/webhooks']);
  });
});

describe('the page', () => {
  test('is one HTML file with inline script and style, nothing fetched from elsewhere, under a strict CSP', async () => {
    const gateway = await start();
    const response = await fetch(gateway.consoleUrl);
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toBe('text/html; charset=utf-8');
    const csp = response.headers.get('content-security-policy')!;
    expect(csp).toMatch(/default-src 'none'/);
    expect(csp).toMatch(/script-src 'sha256-[A-Za-z0-9+/=]+'(;|$)/);
    expect(csp).not.toMatch(/unsafe-inline|unsafe-eval/);
    const html = await response.text();
    expect(html).toMatch(/^<!doctype html>/);
    expect(html).not.toMatch(/<link|<script[^>]*src=|<img|https?:\/\//i);
    expect(html).not.toMatch(/innerHTML|outerHTML|insertAdjacentHTML|document\.write/);
    expect((await fetch(`${gateway.consoleUrl}/`)).status).toBe(200);
  });
});

describe('state and actions', () => {
  test('a job submitted from the console is delivered; each attempt has its time, status, answer and latency', async () => {
    const gateway = await start();
    const app = await receiverApp();
    const { webhookId } = await register(gateway, app.url);

    const submitted = await action(gateway, '/jobs', { prompt: 'a fox', outcome: 'completed' });
    expect(submitted.status).toBe(200);
    const taskId = submitted.json.task_id as string;
    expect(taskId).toMatch(/^task_/);
    await gateway.settled();

    const snapshot = await state(gateway);
    expect(snapshot.baseUrl).toBe(gateway.baseUrl);
    expect(snapshot.webhooks).toEqual([
      expect.objectContaining({ id: webhookId, url: app.url, total_sent: 1, total_failed: 0 }),
    ]);
    expect(snapshot.jobs).toEqual([
      expect.objectContaining({ task_id: taskId, status: 'completed', prompt: 'a fox' }),
    ]);
    expect(snapshot.deliveries).toEqual([
      expect.objectContaining({ type: 'job.completed', taskId, webhookId, url: app.url, state: 'delivered' }),
    ]);
    const [attempt] = snapshot.deliveries[0].attempts;
    expect(attempt).toEqual({
      attempt: 1,
      at: expect.stringMatching(/^\d{4}-\d\d-\d\dT/),
      ok: true,
      status: 200,
      durationMs: expect.any(Number),
      answer: '{"ok":true}',
    });
    expect(attempt.durationMs).toBeGreaterThan(0);
    // The same attempt in the public list, for tests that use no console.
    expect(gateway.deliveries[0]).toMatchObject({ at: attempt.at, answer: '{"ok":true}', status: 200 });
  });

  test('the state never carries a secret: no webhook secret_key, no API key', async () => {
    const gateway = await start();
    const app = await receiverApp();
    await register(gateway, app.url);
    await action(gateway, '/jobs', { prompt: 'p' });
    await gateway.settled();
    const text = JSON.stringify(await state(gateway));
    expect(text).not.toContain(SECRET);
    expect(text).not.toContain('secret');
    expect(text).not.toContain(gateway.apiKey);
    expect(text).not.toContain(gateway.unapprovedApiKey);
  });

  test('outcome "failed" ends the job failed, whatever jobs.outcome says, and sends job.failed', async () => {
    const gateway = await start({ jobs: { stepMs: 1, outcome: () => ({ status: 'completed' }) } });
    const app = await receiverApp();
    await register(gateway, app.url);
    const { json } = await action(gateway, '/jobs', { prompt: 'no word of failure here', outcome: 'failed' });
    await gateway.settled();
    const snapshot = await state(gateway);
    expect(snapshot.jobs[0]).toMatchObject({ task_id: json.task_id, status: 'failed' });
    expect(snapshot.deliveries[0]).toMatchObject({ type: 'job.failed', state: 'delivered' });
    // The next job ends as configured again.
    await action(gateway, '/jobs', { prompt: 'q' });
    await gateway.settled();
    expect((await state(gateway)).jobs[0].status).toBe('completed');
  });

  test('redeliver: the same webhook-id and body to the same webhook, new attempts; the receiver answers a duplicate', async () => {
    const gateway = await start();
    const app = await receiverApp();
    await register(gateway, app.url);
    await action(gateway, '/jobs', { prompt: 'p' });
    await gateway.settled();
    const [first] = (await state(gateway)).deliveries;

    const redelivered = await action(gateway, `/deliveries/${first.deliveryId}/redeliver`, {});
    expect(redelivered.status).toBe(200);
    await gateway.settled();
    expect(redelivered.json).toEqual({ deliveryId: first.deliveryId, number: 2 });
    const [again, original] = (await state(gateway)).deliveries;
    expect(original).toEqual(first);
    expect(again).toMatchObject({
      number: 2,
      deliveryId: first.deliveryId,
      eventId: first.eventId,
      webhookId: first.webhookId,
      redelivery: true,
      state: 'delivered',
      attempts: [{ attempt: 1, status: 200, answer: '{"ok":true,"duplicate":true}' }],
    });
    expect(gateway.deliveries.map((a) => [a.deliveryId, a.redelivery])).toEqual([
      [first.deliveryId, undefined],
      [first.deliveryId, true],
    ]);
  });

  test('a redelivery of an unknown delivery, or of one whose webhook is gone, is a 404', async () => {
    const gateway = await start();
    const app = await receiverApp();
    const { webhookId } = await register(gateway, app.url);
    expect((await action(gateway, '/deliveries/msg_nope/redeliver', {})).status).toBe(404);
    expect((await action(gateway, '/deliveries/%ZZ/redeliver', {})).status).toBe(404);
    await action(gateway, '/jobs', { prompt: 'p' });
    await gateway.settled();
    const [delivery] = (await state(gateway)).deliveries;
    await call(gateway.baseUrl, 'DELETE', `/api/v1/webhooks/${webhookId}`, { apiKey: gateway.apiKey });
    const refused = await action(gateway, `/deliveries/${delivery.deliveryId}/redeliver`, {});
    expect(refused).toMatchObject({ status: 404, json: { error: { code: 'not_found' } } });
    expect((await state(gateway)).deliveries[0].url).toBeNull();
    expect(() => gateway.redeliver(delivery.deliveryId)).toThrow(/deleted/);
  });

  test('a refused job answers with the reason the API would give (credits)', async () => {
    const gateway = await start({ credits: 10 });
    expect((await action(gateway, '/jobs', { prompt: 'p' })).status).toBe(200);
    const refused = await action(gateway, '/jobs', { prompt: 'p' });
    expect(refused).toMatchObject({ status: 402, json: { error: { code: 'insufficient_credits' } } });
    expect((await action(gateway, '/jobs', { prompt: '' })).status).toBe(400);
    expect((await action(gateway, '/jobs', { prompt: 'p', outcome: 'maybe' })).status).toBe(400);
  });

  test('a hostile answer (HTML, script, 10 KB) is kept as text, bounded to 2 KB, and never reaches the page', async () => {
    const hostile = '<script>alert(1)</script><img src=x onerror="alert(2)">' + 'x'.repeat(10_000);
    const gateway = await start();
    const evil = await serve((req, res) => {
      req.resume();
      res.writeHead(500, { 'content-type': 'text/html' }).end(hostile);
    });
    cleanups.push(evil.close);
    await register(gateway, `${evil.url}/hook`);
    await action(gateway, '/jobs', { prompt: 'p' });
    await gateway.settled();
    const [delivery] = (await state(gateway)).deliveries;
    expect(delivery.state).toBe('failed');
    expect(delivery.attempts).toHaveLength(3);
    for (const attempt of delivery.attempts) {
      expect(attempt).toMatchObject({ ok: false, status: 500, error: 'HTTP 500' });
      expect(attempt.answer).toBe(hostile.slice(0, 2048));
    }
    // The page is static: what receivers answer only ever travels as JSON data.
    expect(await (await fetch(gateway.consoleUrl)).text()).not.toContain('alert(');
  });
});

describe('who may use the console', () => {
  test('another Host is refused (no DNS rebinding), like the API', async () => {
    const gateway = await start();
    const url = new URL(gateway.baseUrl);
    const answer = await callWithHost(gateway.baseUrl, `evil.test:${url.port}`, gateway.apiKey);
    expect(answer.status).toBe(403); // the API: unchanged
    const { request } = await import('node:http');
    const status = await new Promise<number>((resolve, reject) => {
      request(
        { host: url.hostname, port: url.port, path: '/_console/state', headers: { host: 'evil.test' } },
        (res) => {
          res.resume();
          resolve(res.statusCode ?? 0);
        },
      )
        .on('error', reject)
        .end();
    });
    expect(status).toBe(403);
  });

  test('actions need JSON and, when an Origin is sent, the gateway own origin', async () => {
    const gateway = await start();
    const foreign = await action(gateway, '/jobs', { prompt: 'p' }, { origin: 'https://evil.test' });
    expect(foreign).toMatchObject({ status: 403, json: { error: { code: 'forbidden' } } });
    const form = await action(gateway, '/jobs', 'prompt=p', {
      'content-type': 'application/x-www-form-urlencoded',
    });
    expect(form.status).toBe(415);
    expect((await action(gateway, '/jobs', '{not json')).status).toBe(400);
    expect((await action(gateway, '/jobs', 'x'.repeat(20_000))).status).toBe(413);
    expect((await state(gateway)).jobs).toEqual([]);
  });

  test('unknown console paths are 404 and wrong methods 405, in the console own JSON', async () => {
    const gateway = await start();
    expect(await call(gateway.baseUrl, 'GET', '/_console/nope')).toMatchObject({
      status: 404,
      json: { error: { code: 'not_found' } },
    });
    expect((await call(gateway.baseUrl, 'POST', '/_console/state', { body: {} })).status).toBe(405);
    expect((await call(gateway.baseUrl, 'GET', '/_console/jobs')).status).toBe(405);
  });
});

describe('server-sent events', () => {
  test('the state at once, again after each change, and heartbeat comments in between', async () => {
    const gateway = await start({ console: { heartbeatMs: 20 } });
    const app = await receiverApp();
    const events = await openEvents(`${gateway.consoleUrl}/events`);
    cleanups.push(events.close);
    expect(events.response.headers.get('content-type')).toBe('text/event-stream; charset=utf-8');

    const initial = await events.nextState();
    expect(initial).toMatchObject({ webhooks: [], jobs: [], deliveries: [] });
    await register(gateway, app.url);
    await events.nextState((s) => s.webhooks.length === 1);
    // A job submitted with the API, not the console: the stream follows the whole simulator.
    const { json } = await call(gateway.baseUrl, 'POST', '/api/v1/images/generate', {
      apiKey: gateway.apiKey,
      body: { model: 'm', prompt: 'p' },
    });
    const delivered = await events.nextState((s) => s.deliveries[0]?.state === 'delivered');
    expect(delivered.jobs[0]).toMatchObject({ task_id: json.data.task_id, status: 'completed' });
    expect(delivered.deliveries[0].attempts[0]).toMatchObject({ status: 200 });
    expect(await events.next((item) => 'comment' in item)).toEqual({ comment: 'heartbeat' });
  });

  test('a retry to come shows as retrying with the time of the next attempt', async () => {
    const gateway = await start({ deliveries: { retryDelaysMs: [60_000] } });
    const events = await openEvents(`${gateway.consoleUrl}/events`);
    cleanups.push(events.close);
    const down = await serve((req, res) => {
      req.resume();
      res.writeHead(503).end('busy');
    });
    cleanups.push(down.close);
    await register(gateway, `${down.url}/hook`);
    await action(gateway, '/jobs', { prompt: 'p' });
    const retrying = await events.nextState((s) => s.deliveries[0]?.state === 'retrying');
    const [delivery] = retrying.deliveries;
    expect(delivery.attempts).toEqual([expect.objectContaining({ status: 503, answer: 'busy' })]);
    expect(Date.parse(delivery.nextAttemptAt)).toBeGreaterThan(Date.now() + 50_000);
  });

  test('gateway.close() ends every open stream', async () => {
    const gateway = await startGateway({ console: true });
    const events = await openEvents(`${gateway.consoleUrl}/events`);
    await events.nextState();
    await gateway.close();
    await events.ended();
    await expect(events.next()).rejects.toThrow(/ended/);
  });
});
