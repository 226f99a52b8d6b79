// The gateway's API failing, counted at the simulator: GET and DELETE are retried on 429/5xx and
// succeed once the fault clears; a POST is never sent twice; registerWebhook at startup keeps
// trying until the gateway answers and still ends with exactly one webhook.
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createReceiver } from 'jobhook';
import {
  createClient,
  GatewayError,
  GatewayNetworkError,
  registerWebhook,
  type GatewayClient,
  type ClientOptions,
} from 'jobhook/client';
import { startGateway, type Gateway } from 'jobhook/testing';
import { afterEach, describe, expect, test } from 'vitest';
import { SECRET } from '../fixtures.js';

const URL_A = 'https://receiver.example/webhooks';

const cleanups: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function gateway(): Promise<Gateway> {
  const started = await startGateway({ rateLimit: false, credits: 100_000 });
  cleanups.push(() => started.close());
  return started;
}

/** Waits are recorded, not slept: the tests stay fast and assert the backoff the client chose. */
/** The client's `retries` option in its object form. */
type RetryOptions = Exclude<ClientOptions['retries'], number | undefined>;

function instantSleep() {
  const waits: number[] = [];
  const sleep: NonNullable<RetryOptions['sleep']> = async (ms) => void waits.push(ms);
  return { waits, sleep };
}

function clientOf(gw: Gateway, retries: RetryOptions = {}): GatewayClient {
  return createClient({ apiKey: gw.apiKey, baseUrl: gw.baseUrl, retries });
}

const count = (gw: Gateway, method: string, path: string) =>
  gw.requests.filter((r) => r.method === method && r.path === path).map((r) => r.status);

describe('client retries while the API fails', () => {
  test.each([429, 500, 502, 503])(
    'GET /webhooks answered %i twice, then 200: the list succeeds',
    async (status) => {
      const gw = await gateway();
      const { waits, sleep } = instantSleep();
      gw.failNext({ status, times: 2, method: 'GET', path: '/api/v1/webhooks' });
      const list = await clientOf(gw, { sleep }).webhooks.list();
      expect(list).toEqual([]);
      expect(count(gw, 'GET', '/api/v1/webhooks')).toEqual([status, status, 200]);
      expect(waits).toHaveLength(2);
    },
  );

  test('a 429 with Retry-After is retried after exactly that wait', async () => {
    const gw = await gateway();
    const client = clientOf(gw);
    const job = await client.images.generate({ model: 'sim-1', prompt: 'p' });
    const { waits, sleep } = instantSleep();
    gw.failNext({ status: 429, times: 1, retryAfterSeconds: 2, method: 'GET' });
    const task = await clientOf(gw, { sleep }).images.get(job.task_id);
    expect(task.task_id).toBe(job.task_id);
    expect(waits).toEqual([2000]);
  });

  test('DELETE answered 500 twice, then 200: deleted once, found gone afterwards', async () => {
    const gw = await gateway();
    const { sleep } = instantSleep();
    const client = clientOf(gw, { sleep });
    const webhook = await client.webhooks.create({ url: URL_A, events: ['job.completed'] });
    gw.failNext({ status: 500, times: 2, method: 'DELETE' });
    expect(await client.webhooks.delete(webhook.id)).toEqual({ id: webhook.id });
    expect(count(gw, 'DELETE', `/api/v1/webhooks/${webhook.id}`)).toEqual([500, 500, 200]);
    expect(await client.webhooks.list()).toEqual([]);
  });

  test('a fault that outlasts the retries rejects with the last GatewayError after limit + 1 attempts', async () => {
    const gw = await gateway();
    const { sleep } = instantSleep();
    gw.failNext({ status: 503, times: 10, method: 'GET' });
    const failure = clientOf(gw, { sleep, limit: 3 }).account.balances();
    await expect(failure).rejects.toBeInstanceOf(GatewayError);
    await expect(failure).rejects.toMatchObject({ status: 503 });
    expect(count(gw, 'GET', '/api/v1/account/balances')).toEqual([503, 503, 503, 503]);
  });

  test.each([
    { status: 500, method: 'POST', path: '/api/v1/images/generate' },
    { status: 503, method: 'POST', path: '/api/v1/images/generate' },
    { status: 429, method: 'POST', path: '/api/v1/images/generate' },
    { status: 500, method: 'POST', path: '/api/v1/webhooks' },
    { status: 429, method: 'POST', path: '/api/v1/keys' },
  ])('$method $path answered $status is sent once, even with retries allowed', async ({ status, path }) => {
    const gw = await gateway();
    const { waits, sleep } = instantSleep();
    const client = clientOf(gw, { sleep, limit: 5 });
    gw.failNext({ status, times: 5, method: 'POST', path });
    const call =
      path === '/api/v1/images/generate'
        ? client.images.generate({ model: 'sim-1', prompt: 'p' })
        : path === '/api/v1/webhooks'
          ? client.webhooks.create({ url: URL_A, events: ['job.completed'] })
          : client.keys.create({ title: 'k' });
    await expect(call).rejects.toMatchObject({ status });
    expect(count(gw, 'POST', path)).toEqual([status]);
    expect(waits).toEqual([]);
  });
});

describe('registerWebhook at startup while the gateway is failing', () => {
  test('503 and 429 for a while on every endpoint: retried until it answers, one webhook in the end', async () => {
    const gw = await gateway();
    const { sleep } = instantSleep();
    const client = createClient({ apiKey: gw.apiKey, baseUrl: gw.baseUrl, retries: { sleep } });
    // 7 failures: more than the client's own 2 retries of one GET, so the registration itself retries.
    gw.failNext({ status: 503, times: 5 });
    gw.failNext({ status: 429, times: 2 });
    const startupWaits: number[] = [];
    const result = await registerWebhook(client, {
      url: URL_A,
      secret: SECRET,
      events: ['job.completed', 'job.failed'],
      startupRetries: { sleep: async (ms) => void startupWaits.push(ms) },
    });
    expect(result.created).toBe(true);
    expect(startupWaits.length).toBeGreaterThan(0);
    const webhooks = await client.webhooks.list();
    expect(webhooks).toHaveLength(1);
    expect(webhooks[0]).toMatchObject({ id: result.webhook.id, url: URL_A, status: 'active' });
    // Every failed attempt was answered before the route ran: exactly one create reached it.
    expect(count(gw, 'POST', '/api/v1/webhooks').filter((s) => s === 200)).toHaveLength(1);
  });

  test('the create failing with 500 is not re-sent blindly: the retry lists first and converges', async () => {
    const gw = await gateway();
    const { sleep } = instantSleep();
    const client = createClient({ apiKey: gw.apiKey, baseUrl: gw.baseUrl, retries: { sleep } });
    gw.failNext({ status: 500, times: 1, method: 'POST', path: '/api/v1/webhooks' });
    const result = await registerWebhook(client, {
      url: URL_A,
      secret: SECRET,
      events: ['job.completed'],
      startupRetries: { sleep },
    });
    expect(count(gw, 'POST', '/api/v1/webhooks')).toEqual([500, 200]);
    // list, create (500) | list, create, list
    expect(count(gw, 'GET', '/api/v1/webhooks')).toEqual([200, 200, 200]);
    expect((await client.webhooks.list()).map((w) => w.id)).toEqual([result.webhook.id]);
  });

  test('three instances starting together against a failing gateway converge on one webhook', async () => {
    const gw = await gateway();
    const { sleep } = instantSleep();
    gw.failNext({ status: 503, times: 9 });
    const instances = Array.from({ length: 3 }, () =>
      createClient({ apiKey: gw.apiKey, baseUrl: gw.baseUrl, retries: { sleep } }),
    );
    const results = await Promise.all(
      instances.map((client) =>
        registerWebhook(client, {
          url: URL_A,
          secret: SECRET,
          events: ['job.completed'],
          startupRetries: { sleep },
        }),
      ),
    );
    const left = await instances[0]!.webhooks.list();
    expect(left).toHaveLength(1);
    for (const result of results) expect(result.webhook.id).toBe(left[0]!.id);
  });

  test('receiver.register passes startupRetries on', async () => {
    const gw = await gateway();
    const { sleep } = instantSleep();
    const receiver = createReceiver({ secret: SECRET });
    receiver.onJobCompleted(() => undefined);
    gw.failNext({ status: 503, times: 4 });
    const client = createClient({ apiKey: gw.apiKey, baseUrl: gw.baseUrl, retries: { sleep } });
    const result = await receiver.register({ client, url: URL_A, startupRetries: { sleep } });
    expect(result.created).toBe(true);
    expect(await client.webhooks.list()).toHaveLength(1);
  });

  test('a gateway that never answers (connection refused): gives up after the retries with the network error', async () => {
    // A port that was just free: nothing listens there.
    const probe = createServer();
    await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
    const { port } = probe.address() as AddressInfo;
    await new Promise((resolve) => probe.close(resolve));
    const { sleep } = instantSleep();
    const client = createClient({ apiKey: 'k', baseUrl: `http://127.0.0.1:${port}`, retries: { sleep } });
    const retried: number[] = [];
    const attempt = registerWebhook(client, {
      url: URL_A,
      events: ['job.completed'],
      startupRetries: { limit: 4, sleep, onRetry: (_error, retry) => void retried.push(retry) },
    });
    await expect(attempt).rejects.toBeInstanceOf(GatewayNetworkError);
    expect(retried).toEqual([1, 2, 3, 4]);
  });

  test('a 401 is not retried: a wrong key fails at once', async () => {
    const gw = await gateway();
    const retried: number[] = [];
    const client = createClient({ apiKey: 'not-a-key', baseUrl: gw.baseUrl });
    const attempt = registerWebhook(client, {
      url: URL_A,
      events: ['job.completed'],
      startupRetries: { onRetry: (_error, retry) => void retried.push(retry) },
    });
    await expect(attempt).rejects.toMatchObject({ status: 401 });
    expect(retried).toEqual([]);
    expect(gw.requests).toHaveLength(1);
  });

  test('startupRetries: false fails on the first 503', async () => {
    const gw = await gateway();
    const { sleep } = instantSleep();
    gw.failNext({ status: 503, times: 3, method: 'GET' });
    const client = createClient({ apiKey: gw.apiKey, baseUrl: gw.baseUrl, retries: { sleep } });
    await expect(
      registerWebhook(client, { url: URL_A, events: ['job.completed'], startupRetries: false }),
    ).rejects.toMatchObject({ status: 503 });
    expect(count(gw, 'GET', '/api/v1/webhooks')).toEqual([503, 503, 503]);
  });
});
