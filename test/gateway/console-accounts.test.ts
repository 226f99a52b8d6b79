// Issues 26.3, 26.4, 26.5: the console shows one account, manages its keys and webhooks, and its
// actions go through the API's checks.
import { afterEach, describe, expect, test } from 'vitest';
import { startGateway, type Gateway, type GatewayOptions } from 'jobhook/testing';
import { call, type Json } from './support.js';
import { SECRET } from './console-support.js';

const cleanups: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function start(options: GatewayOptions = {}) {
  const gateway = await startGateway({ console: true, jobs: { stepMs: 1 }, ...options });
  cleanups.push(() => gateway.close());
  return gateway;
}

/** A console request as the page sends it (same origin), with the page's cookie when it has one. */
function consoleCall(gateway: Gateway, method: string, path: string, body?: unknown, cookie?: string) {
  const headers: Record<string, string> = { origin: gateway.baseUrl };
  if (cookie) headers.cookie = cookie;
  return call(gateway.baseUrl, method, `/_console${path}`, { body, headers });
}

/** Opens the console with `apiKey` as a browser would; resolves with the session cookie. */
async function openWith(gateway: Gateway, apiKey: string): Promise<string> {
  const response = await fetch(`${gateway.consoleUrl}?api_key=${encodeURIComponent(apiKey)}`, {
    redirect: 'manual',
  });
  expect(response.status).toBe(303);
  expect(response.headers.get('location')).toBe('/_console');
  const cookie = response.headers.get('set-cookie')!;
  expect(cookie).toMatch(/HttpOnly/);
  expect(cookie).toMatch(/SameSite=Strict/);
  expect(cookie).not.toContain(apiKey);
  return cookie.split(';')[0]!;
}

async function apiWebhook(gateway: Gateway, apiKey: string, url: string) {
  const { json } = await call(gateway.baseUrl, 'POST', '/api/v1/webhooks', {
    apiKey,
    body: { url, events: ['job.completed'] },
  });
  return json.data.id as number;
}

describe('one account at a time (26.4)', () => {
  test("without a key the console shows the main account only: no other account's webhook, job or prompt", async () => {
    const gateway = await start();
    const other = gateway.createAccount();
    await apiWebhook(gateway, other.apiKey, 'http://127.0.0.1:9/other');
    await call(gateway.baseUrl, 'POST', '/api/v1/images/generate', {
      apiKey: other.apiKey,
      body: { model: 'm', prompt: 'a secret prompt of the other account' },
    });
    const mine = await apiWebhook(gateway, gateway.apiKey, 'http://127.0.0.1:9/mine');
    await gateway.settled();

    const { json } = await consoleCall(gateway, 'GET', '/state');
    expect(json.account).toMatchObject({ key_id: gateway.apiKeyId, approved: true });
    expect(json.webhooks.map((w: Json) => w.id)).toEqual([mine]);
    expect(json.jobs).toEqual([]);
    expect(JSON.stringify(json)).not.toContain('secret prompt');
  });

  test("opened with another key, the page shows and acts as that key's account", async () => {
    const gateway = await start();
    const other = gateway.createAccount();
    const otherHook = await apiWebhook(gateway, other.apiKey, 'http://127.0.0.1:9/other');
    await apiWebhook(gateway, gateway.apiKey, 'http://127.0.0.1:9/mine');
    const cookie = await openWith(gateway, other.apiKey);

    const { json } = await consoleCall(gateway, 'GET', '/state', undefined, cookie);
    expect(json.account.key_id).toBe(other.apiKeyId);
    expect(json.webhooks.map((w: Json) => w.id)).toEqual([otherHook]);
    const job = await consoleCall(gateway, 'POST', '/jobs', { prompt: 'as the other' }, cookie);
    expect(job.status).toBe(200);
    await gateway.settled();
    const task = await call(gateway.baseUrl, 'GET', `/api/v1/images/${job.json.task_id}`, {
      apiKey: other.apiKey,
    });
    expect(task.status).toBe(200);
    // The main account's view is unchanged.
    expect((await consoleCall(gateway, 'GET', '/state')).json.jobs).toEqual([]);
  });

  test('an unknown key opens nothing (401), and the answer never repeats it', async () => {
    const gateway = await start();
    const response = await fetch(`${gateway.consoleUrl}?api_key=sk_made_up`, { redirect: 'manual' });
    expect(response.status).toBe(401);
    expect(response.headers.get('set-cookie')).toBeNull();
    expect(await response.text()).not.toContain('sk_made_up');
  });

  test("another account's delivery cannot be redelivered from the console (404)", async () => {
    const gateway = await start({ deliveries: { dropRate: 1 } });
    await apiWebhook(gateway, gateway.apiKey, 'http://127.0.0.1:9/mine');
    await call(gateway.baseUrl, 'POST', '/api/v1/images/generate', {
      apiKey: gateway.apiKey,
      body: { model: 'm', prompt: 'p' },
    });
    await gateway.settled();
    const cookie = await openWith(gateway, gateway.createAccount().apiKey);
    const refused = await consoleCall(
      gateway,
      'POST',
      `/deliveries/${gateway.dropped[0]!.deliveryId}/redeliver`,
      {},
      cookie,
    );
    expect(refused.status).toBe(404);
  });
});

describe("console jobs go through the API's checks (26.5)", () => {
  test('the rate limit of the key the console acts with', async () => {
    const gateway = await start({ rateLimit: { requests: 2, windowMs: 60_000 } });
    expect((await consoleCall(gateway, 'POST', '/jobs', { prompt: 'a' })).status).toBe(200);
    expect((await consoleCall(gateway, 'POST', '/jobs', { prompt: 'b' })).status).toBe(200);
    const third = await consoleCall(gateway, 'POST', '/jobs', { prompt: 'c' });
    expect(third).toMatchObject({ status: 429, json: { error: { code: 'rate_limited' } } });
  });

  test('failNext', async () => {
    const gateway = await start();
    gateway.failNext({ path: '/api/v1/images/generate', status: 503, code: 'overloaded' });
    const failed = await consoleCall(gateway, 'POST', '/jobs', { prompt: 'a' });
    expect(failed).toMatchObject({ status: 503, json: { error: { code: 'overloaded' } } });
    expect((await consoleCall(gateway, 'POST', '/jobs', { prompt: 'a' })).status).toBe(200);
  });

  test('an account whose API access is not approved is refused, as by the API', async () => {
    const gateway = await start();
    const cookie = await openWith(gateway, gateway.unapprovedApiKey);
    const refused = await consoleCall(gateway, 'POST', '/jobs', { prompt: 'a' }, cookie);
    expect(refused).toMatchObject({ status: 403, json: { error: { code: 'forbidden' } } });
  });
});

describe('API keys and webhooks from the console (26.3)', () => {
  test('create a key: its plaintext once in the answer, then only its title in the list; the key works', async () => {
    const gateway = await start();
    const created = await consoleCall(gateway, 'POST', '/keys', { title: 'deploy key' });
    expect(created.status).toBe(200);
    expect(created.json).toMatchObject({
      title: 'deploy key',
      status: 'created',
      api_key: expect.stringMatching(/^sk_/),
    });
    const { json } = await consoleCall(gateway, 'GET', '/state');
    expect(json.keys.map((k: Json) => k.title)).toEqual(['simulator', 'deploy key']);
    expect(JSON.stringify(json)).not.toContain(created.json.api_key);
    const listed = await call(gateway.baseUrl, 'GET', '/api/v1/webhooks', { apiKey: created.json.api_key });
    expect(listed.status).toBe(200);
    expect((await consoleCall(gateway, 'POST', '/keys', { title: '  ' })).status).toBe(400);
  });

  test('create a webhook with a secret, then delete it; the API validates both', async () => {
    const gateway = await start();
    const created = await consoleCall(gateway, 'POST', '/webhooks', {
      url: 'http://127.0.0.1:9/hook',
      events: ['job.completed', 'job.failed'],
      secret_key: SECRET,
    });
    expect(created.status).toBe(200);
    expect(created.json).not.toHaveProperty('secret_key');
    expect(gateway.webhook(created.json.id)?.secret_key).toBe(SECRET);
    expect((await consoleCall(gateway, 'GET', '/state')).json.webhooks).toHaveLength(1);

    const plainHttp = await consoleCall(gateway, 'POST', '/webhooks', {
      url: 'http://example.com/',
      events: ['job.completed'],
    });
    expect(plainHttp).toMatchObject({ status: 400, json: { error: { code: 'invalid_request' } } });

    const other = gateway.createAccount();
    const theirs = await apiWebhook(gateway, other.apiKey, 'http://127.0.0.1:9/theirs');
    expect((await consoleCall(gateway, 'DELETE', `/webhooks/${theirs}`)).status).toBe(404);
    const foreign = await call(gateway.baseUrl, 'DELETE', `/_console/webhooks/${created.json.id}`, {
      headers: { origin: 'https://evil.test' },
    });
    expect(foreign.status).toBe(403);
    expect((await consoleCall(gateway, 'DELETE', `/webhooks/${created.json.id}`)).status).toBe(200);
    expect(gateway.webhook(created.json.id)).toBeUndefined();
  });
});
