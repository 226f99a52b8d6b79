import { afterEach, beforeEach, describe, expect, test } from 'vitest';
import { startGateway, type Gateway } from 'jobhook/testing';
import { call, callWithHost } from './support.js';

let gateway: Gateway;
beforeEach(async () => {
  gateway = await startGateway({ rateLimit: { requests: 3, windowMs: 60_000 } });
});
afterEach(() => gateway.close());

describe('the response envelope (2.1)', () => {
  test('a success carries success: true, data and a request_id', async () => {
    const { status, json, headers } = await call(gateway.baseUrl, 'GET', '/api/v1/webhooks', {
      apiKey: gateway.apiKey,
    });
    expect(status).toBe(200);
    expect(json).toEqual({ success: true, data: [], request_id: expect.stringMatching(/^req_/) });
    expect(json).not.toHaveProperty('error');
    expect(headers.get('content-type')).toMatch(/^application\/json/);
  });

  test('a failure carries success: false, error{code,message} and a request_id, and no data', async () => {
    const { status, json } = await call(gateway.baseUrl, 'DELETE', '/api/v1/webhooks/42', {
      apiKey: gateway.apiKey,
    });
    expect(status).toBe(404);
    expect(json).toEqual({
      success: false,
      error: { code: 'not_found', message: expect.stringMatching(/webhook/i) },
      request_id: expect.stringMatching(/^req_/),
    });
  });

  test('each answer has its own request_id', async () => {
    const a = await call(gateway.baseUrl, 'GET', '/api/v1/webhooks', { apiKey: gateway.apiKey });
    const b = await call(gateway.baseUrl, 'GET', '/api/v1/webhooks', { apiKey: gateway.apiKey });
    expect(a.json.request_id).not.toBe(b.json.request_id);
  });

  test('the request_id is also the x-request-id header, on a success and on a failure', async () => {
    const ok = await call(gateway.baseUrl, 'GET', '/api/v1/webhooks', { apiKey: gateway.apiKey });
    const failed = await call(gateway.baseUrl, 'GET', '/api/v1/webhooks');
    expect(ok.headers.get('x-request-id')).toBe(ok.json.request_id);
    expect(failed.status).toBe(401);
    expect(failed.headers.get('x-request-id')).toBe(failed.json.request_id);
  });

  test('a known path with another method is 405 method_not_allowed in the envelope', async () => {
    for (const [method, path] of [
      ['PUT', '/api/v1/webhooks'],
      ['GET', '/api/v1/keys'],
      ['DELETE', '/api/v1/images/task_1'],
    ] as const) {
      const { status, json } = await call(gateway.baseUrl, method, path, { apiKey: gateway.apiKey });
      expect({ method, path, status, json }).toEqual({
        method,
        path,
        status: 405,
        json: {
          success: false,
          error: { code: 'method_not_allowed', message: `${method} is not allowed on ${path}.` },
          request_id: expect.stringMatching(/^req_/),
        },
      });
    }
  });

  test('a malformed percent-escape in a path is 400 invalid_request, not a server error', async () => {
    for (const [method, path] of [
      ['GET', '/api/v1/images/%ZZ'],
      ['DELETE', '/api/v1/webhooks/%E0%A4%A'],
    ] as const) {
      const { status, json } = await call(gateway.baseUrl, method, path, { apiKey: gateway.apiKey });
      expect({ path, status, code: json.error.code }).toEqual({ path, status: 400, code: 'invalid_request' });
      expect(json.error.message).toMatch(/malformed percent-escape/);
    }
  });

  test('every path is under /api/v1 (9): other versions and paths are 404 not_found', async () => {
    const { status, json } = await call(gateway.baseUrl, 'GET', '/api/v2/webhooks', {
      apiKey: gateway.apiKey,
    });
    expect(status).toBe(404);
    expect(json.error.code).toBe('not_found');
  });
});

describe('authentication and access (5)', () => {
  test('a missing key is 401 unauthorized', async () => {
    const { status, json } = await call(gateway.baseUrl, 'GET', '/api/v1/webhooks');
    expect(status).toBe(401);
    expect(json.success).toBe(false);
    expect(json.error.code).toBe('unauthorized');
    expect(json.request_id).toMatch(/^req_/);
  });

  test('an unknown key is 401 unauthorized, on every endpoint', async () => {
    const endpoints = [
      ['POST', '/api/v1/keys'],
      ['POST', '/api/v1/webhooks'],
      ['GET', '/api/v1/webhooks'],
      ['DELETE', '/api/v1/webhooks/1'],
      ['POST', '/api/v1/images/generate'],
      ['GET', '/api/v1/images/task_1'],
      ['GET', '/api/v1/account/balances'],
    ];
    for (const [method, path] of endpoints) {
      const { status, json } = await call(gateway.baseUrl, method!, path!, {
        apiKey: 'sk_not_a_key',
        body: method === 'POST' ? {} : undefined,
      });
      expect({ method, path, status, code: json.error.code }).toEqual({
        method,
        path,
        status: 401,
        code: 'unauthorized',
      });
    }
  });

  test('an account whose API access is not approved gets 403', async () => {
    const { status, json } = await call(gateway.baseUrl, 'GET', '/api/v1/account/balances', {
      apiKey: gateway.unapprovedApiKey,
    });
    expect(status).toBe(403);
    expect(json.error.code).toBe('forbidden');
    expect(json.request_id).toMatch(/^req_/);
  });

  test('a request to a host other than the gateway host gets 403, even with a valid key', async () => {
    const port = new URL(gateway.baseUrl).port;
    const refused = await callWithHost(gateway.baseUrl, `evil.test:${port}`, gateway.apiKey);
    expect(refused.status).toBe(403);
    expect(refused.json).toMatchObject({ success: false, error: { code: 'forbidden' } });
    expect(refused.json.error.message).toContain(`use 127.0.0.1:${port} or localhost:${port}`);
    const served = await callWithHost(gateway.baseUrl, new URL(gateway.baseUrl).host, gateway.apiKey);
    expect(served.status).toBe(200);
  });

  test('the scheme name is case-insensitive (RFC 9110): "bearer" and "BEARER" work', async () => {
    for (const scheme of ['bearer', 'BEARER']) {
      const { status } = await call(gateway.baseUrl, 'GET', '/api/v1/webhooks', {
        headers: { authorization: `${scheme} ${gateway.apiKey}` },
      });
      expect({ scheme, status }).toEqual({ scheme, status: 200 });
    }
  });

  test('the Authorization header must use the Bearer scheme', async () => {
    const { status } = await call(gateway.baseUrl, 'GET', '/api/v1/webhooks', {
      headers: { authorization: `Basic ${gateway.apiKey}` },
    });
    expect(status).toBe(401);
  });
});

describe('limits and server errors (7, 8)', () => {
  test('past the rate limit a key gets 429 rate_limited with Retry-After', async () => {
    for (let i = 0; i < 3; i++) {
      expect(
        (await call(gateway.baseUrl, 'GET', '/api/v1/webhooks', { apiKey: gateway.apiKey })).status,
      ).toBe(200);
    }
    const limited = await call(gateway.baseUrl, 'GET', '/api/v1/webhooks', { apiKey: gateway.apiKey });
    expect(limited.status).toBe(429);
    expect(limited.json).toMatchObject({ success: false, error: { code: 'rate_limited' } });
    expect(Number(limited.headers.get('retry-after'))).toBeGreaterThan(0);
    // The limit is per key: another account's key is unaffected.
    const other = gateway.createAccount();
    expect((await call(gateway.baseUrl, 'GET', '/api/v1/webhooks', { apiKey: other.apiKey })).status).toBe(
      200,
    );
  });

  test('an injected server failure answers 500 internal_error in the envelope', async () => {
    gateway.failNext({ path: '/api/v1/account/balances' });
    const failed = await call(gateway.baseUrl, 'GET', '/api/v1/account/balances', { apiKey: gateway.apiKey });
    expect(failed.status).toBe(500);
    expect(failed.json).toMatchObject({
      success: false,
      error: { code: 'internal_error' },
      request_id: expect.any(String),
    });
    const next = await call(gateway.baseUrl, 'GET', '/api/v1/account/balances', { apiKey: gateway.apiKey });
    expect(next.status).toBe(200);
  });

  test('a body that is not JSON, or sent without application/json, is 400 invalid_request', async () => {
    const broken = await call(gateway.baseUrl, 'POST', '/api/v1/keys', {
      apiKey: gateway.apiKey,
      body: '{"title":',
    });
    expect(broken.status).toBe(400);
    expect(broken.json.error.code).toBe('invalid_request');
    const wrongType = await call(gateway.baseUrl, 'POST', '/api/v1/keys', {
      apiKey: gateway.apiKey,
      body: JSON.stringify({ title: 'x' }),
      headers: { 'content-type': 'text/plain' },
    });
    expect(wrongType.status).toBe(400);
  });
});

describe('API keys (4.1, 2.2)', () => {
  test('creation answers id, title, status created, created_at and the plaintext key, which then works', async () => {
    const { status, json } = await call(gateway.baseUrl, 'POST', '/api/v1/keys', {
      apiKey: gateway.apiKey,
      body: { title: 'worker' },
    });
    expect(status).toBe(200);
    expect(json.data).toEqual({
      id: expect.any(Number),
      title: 'worker',
      status: 'created',
      created_at: expect.any(String),
      api_key: expect.any(String),
    });
    expect(Number.isInteger(json.data.id)).toBe(true);
    expect(new Date(json.data.created_at).toISOString()).toBe(json.data.created_at);
    const withNewKey = await call(gateway.baseUrl, 'GET', '/api/v1/account/balances', {
      apiKey: json.data.api_key,
    });
    expect(withNewKey.status).toBe(200);
  });

  test('the plaintext key appears in no other answer', async () => {
    const created = await call(gateway.baseUrl, 'POST', '/api/v1/keys', {
      apiKey: gateway.apiKey,
      body: { title: 'once' },
    });
    const key: string = created.json.data.api_key;
    const webhook = await call(gateway.baseUrl, 'POST', '/api/v1/webhooks', {
      apiKey: key,
      body: { url: 'https://example.com/hook', events: ['job.completed'], api_key_id: created.json.data.id },
    });
    const answers = [
      webhook,
      await call(gateway.baseUrl, 'GET', '/api/v1/webhooks', { apiKey: key }),
      await call(gateway.baseUrl, 'GET', '/api/v1/account/balances', { apiKey: key }),
    ];
    for (const answer of answers) expect(JSON.stringify(answer.json)).not.toContain(key);
  });

  test.each([[{}], [{ title: '' }], [{ title: '   ' }], [{ title: 42 }], [{ title: 'x'.repeat(201) }]])(
    'an invalid title is 400 invalid_request: %j',
    async (body) => {
      const { status, json } = await call(gateway.baseUrl, 'POST', '/api/v1/keys', {
        apiKey: gateway.apiKey,
        body,
      });
      expect(status).toBe(400);
      expect(json.error.code).toBe('invalid_request');
    },
  );
});
