import { request as httpRequest } from 'node:http';
import { afterEach, beforeEach, describe, expect, expectTypeOf, test } from 'vitest';
import {
  createClient,
  GatewayError,
  GatewayNetworkError,
  GatewayTimeoutError,
  type GatewayClient,
  type ImageTask,
  type Webhook,
} from 'jobhook/client';
import { startGateway, type Gateway } from 'jobhook/testing';
import { startSink } from '../gateway/support.js';

let gateway: Gateway;
let client: GatewayClient;
let delays: number[];
/** Records each backoff instead of waiting it out: retries are asserted by count, never by time. */
const recordSleep = async (ms: number) => void delays.push(ms);

beforeEach(async () => {
  gateway = await startGateway({ jobs: { auto: false }, credits: 100, creditsPerImage: 10 });
  delays = [];
  client = createClient({
    apiKey: gateway.apiKey,
    baseUrl: gateway.baseUrl,
    retries: { sleep: recordSleep },
  });
});
afterEach(() => gateway.close());

async function failure(promise: Promise<unknown>): Promise<GatewayError> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(GatewayError);
  return error as GatewayError;
}

/** A fetch that answers nothing until its signal aborts, like a gateway that stopped responding. */
const hangingFetch: typeof fetch = (_input, init) =>
  new Promise((_, reject) =>
    init!.signal!.addEventListener('abort', () => reject(init!.signal!.reason as Error)),
  );

const countRequests = (method: string, path: string) =>
  gateway.requests.filter((r) => r.method === method && r.path === path).length;

describe('the endpoints', () => {
  test('keys.create returns the typed key, plaintext included', async () => {
    const key = await client.keys.create({ title: 'ci' });
    expectTypeOf(key.api_key).toEqualTypeOf<string>();
    expect(key).toMatchObject({
      id: expect.any(Number),
      title: 'ci',
      status: 'created',
      api_key: expect.any(String),
    });
    const withIt = createClient({ apiKey: key.api_key, baseUrl: gateway.baseUrl });
    await expect(withIt.account.balances()).resolves.toBeDefined();
  });

  test('webhooks.create, list and delete', async () => {
    const created = await client.webhooks.create({
      url: 'https://example.com/hook',
      events: ['job.completed'],
      secret_key: 'secret',
      api_key_id: gateway.apiKeyId,
    });
    expectTypeOf(created).toEqualTypeOf<Webhook>();
    expect(created).toMatchObject({
      url: 'https://example.com/hook',
      status: 'active',
      api_key_id: gateway.apiKeyId,
    });
    const list = await client.webhooks.list();
    expect(list).toEqual([
      expect.objectContaining({ id: created.id, total_sent: 0, total_failed: 0, last_error: null }),
    ]);
    await expect(client.webhooks.delete(created.id)).resolves.toEqual({ id: created.id });
    await expect(client.webhooks.list()).resolves.toEqual([]);
  });

  test('images.generate and images.get; fields the document does not list are kept', async () => {
    const job = await client.images.generate({ model: 'm', prompt: 'a lighthouse', aspect_ratio: '16:9' });
    expect(job).toEqual({ task_id: expect.any(String), credits_used: 10, remaining_credits: 90 });
    gateway.advanceJob(job.task_id);
    gateway.advanceJob(job.task_id);
    const task = await client.images.get(job.task_id);
    expectTypeOf(task).toEqualTypeOf<ImageTask>();
    expect(task).toMatchObject({ task_id: job.task_id, status: 'completed', image_url: expect.any(String) });
    // created_at is the simulator's own addition: the client hands it over rather than stripping it.
    expect(task.created_at).toEqual(expect.any(String));
  });

  test('account.balances', async () => {
    await client.images.generate({ model: 'm', prompt: 'p' });
    await expect(client.account.balances()).resolves.toEqual({
      total_credits: 100,
      used_credits: 10,
      remaining_credits: 90,
    });
  });

  test('a paginated list answer ({ items }) also resolves to an array', async () => {
    await client.webhooks.create({ url: 'https://example.com/a', events: ['job.failed'] });
    // The simulator answers with an array; this fetch rewrites it into the paginated form.
    const paginating: typeof fetch = async (input, init) => {
      const response = await fetch(input, init);
      const envelope = (await response.json()) as { data: unknown };
      const data = Array.isArray(envelope.data) ? { items: envelope.data, next: null } : envelope.data;
      return Response.json({ ...envelope, data }, { status: response.status });
    };
    const paged = createClient({ apiKey: gateway.apiKey, baseUrl: gateway.baseUrl, fetch: paginating });
    const list = await paged.webhooks.list();
    expect(list).toEqual([expect.objectContaining({ url: 'https://example.com/a' })]);
  });
});

describe('failures are GatewayErrors', () => {
  test('a 404 carries status, code, message and request_id', async () => {
    const error = await failure(client.webhooks.delete(999));
    expect(error).toMatchObject({
      status: 404,
      code: 'not_found',
      requestId: expect.stringMatching(/^req_/),
    });
    expect(error.message).toMatch(/webhook not found/i);
    expect(error.name).toBe('GatewayError');
  });

  test('400, 401 and 403 (unapproved and wrong host) keep their codes', async () => {
    expect(await failure(client.keys.create({ title: '' }))).toMatchObject({
      status: 400,
      code: 'invalid_request',
    });
    const unknownKey = createClient({ apiKey: 'sk_wrong', baseUrl: gateway.baseUrl });
    expect(await failure(unknownKey.account.balances())).toMatchObject({ status: 401, code: 'unauthorized' });
    const unapproved = createClient({ apiKey: gateway.unapprovedApiKey, baseUrl: gateway.baseUrl });
    expect(await failure(unapproved.account.balances())).toMatchObject({ status: 403, code: 'forbidden' });
    // localhost is the same host as 127.0.0.1 for the simulator; a name it does not serve is refused.
    const wrongHost = createClient({
      apiKey: gateway.apiKey,
      baseUrl: gateway.baseUrl,
      fetch: claimingHost('evil.test'),
    });
    expect(await failure(wrongHost.account.balances())).toMatchObject({ status: 403, code: 'forbidden' });
  });

  test('the statuses listed for the list operation (404, 429, 500) surface as GatewayErrors once retries end', async () => {
    for (const [status, code] of [
      [404, 'not_found'],
      [429, 'rate_limited'],
      [500, 'internal_error'],
    ] as const) {
      // 404 is final at once; 429 and 500 fail all three attempts (the first and two retries).
      gateway.failNext({ status, code, times: status === 404 ? 1 : 3, path: '/api/v1/webhooks' });
      expect(await failure(client.webhooks.list())).toMatchObject({
        status,
        code,
        requestId: expect.stringMatching(/^req_/),
      });
    }
  });

  test('an answer that is not the envelope still becomes a GatewayError', async () => {
    const proxy: typeof fetch = async () => new Response('<html>Bad gateway</html>', { status: 502 });
    const behindProxy = createClient({
      apiKey: 'k',
      baseUrl: 'https://gw.example',
      fetch: proxy,
      retries: 0,
    });
    expect(await failure(behindProxy.account.balances())).toMatchObject({
      status: 502,
      code: 'http_502',
      requestId: undefined,
    });
  });

  test('an unreachable gateway is a GatewayNetworkError', async () => {
    const closed = await startSink();
    await closed.close();
    const offline = createClient({ apiKey: gateway.apiKey, baseUrl: new URL(closed.url).origin, retries: 0 });
    const error = await failure(offline.webhooks.list());
    expect(error).toBeInstanceOf(GatewayNetworkError);
    expect(error).toMatchObject({ name: 'GatewayNetworkError', status: 0, code: 'network_error' });
  });

  test('no answer within timeoutMs is a GatewayTimeoutError', async () => {
    const hanging = hangingFetch;
    const slow = createClient({
      apiKey: 'k',
      baseUrl: 'https://gw.example',
      fetch: hanging,
      timeoutMs: 20,
      retries: 0,
    });
    const error = await failure(slow.images.get('task_1'));
    expect(error).toBeInstanceOf(GatewayTimeoutError);
    expect(error).toMatchObject({ status: 0, code: 'timeout' });
  });

  test("the caller's AbortSignal cancels the call with the caller's reason, not a GatewayError", async () => {
    const hanging = hangingFetch;
    const slow = createClient({ apiKey: 'k', baseUrl: 'https://gw.example', fetch: hanging });
    const controller = new AbortController();
    const call = slow.webhooks.list({ signal: controller.signal });
    controller.abort(new Error('shutting down'));
    await expect(call).rejects.toThrow('shutting down');
    await expect(call).rejects.not.toBeInstanceOf(GatewayError);
  });

  test('neither the API key nor a secret_key appears in an error message', async () => {
    const secret = 'super-secret-signing-key';
    const error = await failure(
      client.webhooks.create({ url: 'http://example.com/x', events: ['job.completed'], secret_key: secret }),
    );
    expect(error.message).not.toContain(secret);
    expect(error.message).not.toContain(gateway.apiKey);
    // Even a gateway that echoes the key back cannot put it into our message.
    const echoing: typeof fetch = async (_input, init) => {
      const auth = new Headers(init?.headers).get('authorization') ?? '';
      return Response.json(
        { success: false, error: { code: 'unauthorized', message: `bad key ${auth}` }, request_id: 'r' },
        { status: 401 },
      );
    };
    const echo = createClient({ apiKey: 'sk_live_123456', baseUrl: 'https://gw.example', fetch: echoing });
    const echoed = await failure(echo.account.balances());
    expect(echoed.message).not.toContain('sk_live_123456');
    expect(JSON.stringify(echoed)).not.toContain('sk_live_123456');
  });

  test('createClient refuses a missing key or base URL without echoing either', () => {
    expect(() => createClient({ apiKey: '', baseUrl: gateway.baseUrl })).toThrow(/apiKey/);
    expect(() => createClient({ apiKey: 'sk_abc', baseUrl: 'not a url' })).toThrow(/baseUrl/);
    expect(() => createClient({ apiKey: 'sk_abc', baseUrl: 'not a url' })).not.toThrow(/sk_abc/);
  });
});

describe('retries', () => {
  test('a GET is retried on 500 with growing, jittered backoff, and succeeds', async () => {
    gateway.failNext({ times: 2, status: 500, path: '/api/v1/webhooks' });
    await expect(client.webhooks.list()).resolves.toEqual([]);
    expect(countRequests('GET', '/api/v1/webhooks')).toBe(3);
    expect(delays).toHaveLength(2);
    expect(delays[0]).toBeLessThanOrEqual(250);
    expect(delays[1]).toBeLessThanOrEqual(500);
  });

  test('429 honours Retry-After', async () => {
    gateway.failNext({ status: 429, retryAfterSeconds: 3 });
    await expect(client.account.balances()).resolves.toBeDefined();
    expect(delays).toEqual([3000]);
  });

  test('the real rate limit is waited out as its Retry-After says', async () => {
    await gateway.close();
    gateway = await startGateway({ rateLimit: { requests: 1, windowMs: 2000 } });
    client = createClient({
      apiKey: gateway.apiKey,
      baseUrl: gateway.baseUrl,
      retries: { limit: 1, sleep: recordSleep },
    });
    await client.webhooks.list();
    await expect(client.webhooks.list()).rejects.toMatchObject({ status: 429, code: 'rate_limited' });
    expect(delays).toEqual([2000]);
  });

  test('a Retry-After given as an HTTP date is honoured too', async () => {
    const date = new Date(Date.now() + 5000).toUTCString();
    let calls = 0;
    const busy: typeof fetch = async () =>
      calls++ === 0
        ? Response.json(
            { success: false, error: { code: 'rate_limited', message: 'slow down' }, request_id: 'r1' },
            { status: 429, headers: { 'retry-after': date } },
          )
        : Response.json({ success: true, data: [], request_id: 'r2' });
    const c = createClient({
      apiKey: 'k',
      baseUrl: 'https://gw.example',
      fetch: busy,
      retries: { sleep: recordSleep },
    });
    await expect(c.webhooks.list()).resolves.toEqual([]);
    expect(delays).toHaveLength(1);
    expect(delays[0]).toBeGreaterThanOrEqual(3000);
    expect(delays[0]).toBeLessThanOrEqual(6000);
  });

  test('a Retry-After beyond maxDelayMs is not waited for', async () => {
    gateway.failNext({ status: 429, retryAfterSeconds: 120 });
    expect(await failure(client.account.balances())).toMatchObject({ status: 429, retryAfterSeconds: 120 });
    expect(delays).toEqual([]);
  });

  test('DELETE is retried on 503', async () => {
    const { id } = await client.webhooks.create({ url: 'https://example.com/a', events: ['job.completed'] });
    gateway.failNext({ status: 503, method: 'DELETE' });
    await expect(client.webhooks.delete(id)).resolves.toEqual({ id });
    expect(countRequests('DELETE', `/api/v1/webhooks/${id}`)).toBe(2);
  });

  test('a POST is never re-sent by default: no second charge, no second webhook', async () => {
    gateway.failNext({ status: 500, path: '/api/v1/images/generate' });
    expect(await failure(client.images.generate({ model: 'm', prompt: 'p' }))).toMatchObject({ status: 500 });
    gateway.failNext({ status: 503, path: '/api/v1/webhooks', method: 'POST' });
    await failure(client.webhooks.create({ url: 'https://example.com/a', events: ['job.completed'] }));
    expect(countRequests('POST', '/api/v1/images/generate')).toBe(1);
    expect(countRequests('POST', '/api/v1/webhooks')).toBe(1);
    expect(delays).toEqual([]);
  });

  test('POST retries can be turned on explicitly', async () => {
    gateway.failNext({ status: 500, path: '/api/v1/keys' });
    const key = await client.keys.create(
      { title: 'x' },
      { retries: { methods: ['POST'], sleep: recordSleep } },
    );
    expect(key.title).toBe('x');
    expect(countRequests('POST', '/api/v1/keys')).toBe(2);
  });

  test('4xx other than 429 is not retried, and retries: 0 turns retrying off', async () => {
    await failure(client.webhooks.delete(12345));
    expect(countRequests('DELETE', '/api/v1/webhooks/12345')).toBe(1);
    gateway.failNext({ status: 500 });
    await failure(client.webhooks.list({ retries: 0 }));
    expect(countRequests('GET', '/api/v1/webhooks')).toBe(1);
  });

  test('a lost connection on a GET is retried', async () => {
    let calls = 0;
    const flaky: typeof fetch = async (input, init) => {
      if (calls++ === 0) throw new TypeError('fetch failed', { cause: { code: 'ECONNRESET' } });
      return fetch(input, init);
    };
    const c = createClient({
      apiKey: gateway.apiKey,
      baseUrl: gateway.baseUrl,
      fetch: flaky,
      retries: { sleep: recordSleep },
    });
    await expect(c.webhooks.list()).resolves.toEqual([]);
    expect(calls).toBe(2);
  });

  test('retries stop at the limit and the last failure is thrown', async () => {
    gateway.failNext({ times: 10, status: 500 });
    expect(await failure(client.account.balances())).toMatchObject({ status: 500, code: 'internal_error' });
    expect(countRequests('GET', '/api/v1/account/balances')).toBe(3);
  });
});

/** A fetch that sends each request with `Host: <host>` (fetch itself will not let a caller set Host). */
function claimingHost(host: string): typeof fetch {
  return (input, init) =>
    new Promise((resolve, reject) => {
      const headers: Record<string, string> = {};
      new Headers(init?.headers).forEach((value, name) => (headers[name] = value));
      headers.host = host;
      const url = input instanceof Request ? input.url : input.toString();
      const req = httpRequest(url, { method: init?.method ?? 'GET', headers }, (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('end', () =>
          resolve(
            new Response(Buffer.concat(chunks), {
              status: res.statusCode ?? 0,
              headers: { 'content-type': 'application/json' },
            }),
          ),
        );
      });
      req.on('error', reject);
      req.end(typeof init?.body === 'string' ? init.body : undefined);
    });
}
