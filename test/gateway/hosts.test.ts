// Issues 24.3 and 26.4: which Host headers the simulator serves, on every bind address.
import { request } from 'node:http';
import { hostname } from 'node:os';
import { afterEach, describe, expect, test } from 'vitest';
import { startGateway, type Gateway, type GatewayOptions } from 'jobhook/testing';
import type { Json } from './support.js';

const cleanups: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function start(options: GatewayOptions = {}) {
  const gateway = await startGateway({ console: true, ...options });
  cleanups.push(() => gateway.close());
  return gateway;
}

/** One request to the simulator (reached on 127.0.0.1) that claims `host` (and `origin`). */
function claim(
  gateway: Gateway,
  host: string,
  options: { method?: string; path?: string; origin?: string; body?: string } = {},
) {
  const port = new URL(gateway.baseUrl).port;
  const headers: Record<string, string> = { host, authorization: `Bearer ${gateway.apiKey}` };
  if (options.origin) headers.origin = options.origin;
  if (options.body !== undefined) headers['content-type'] = 'application/json';
  return new Promise<{ status: number; json: Json }>((resolve, reject) => {
    const req = request(
      {
        host: '127.0.0.1',
        port,
        method: options.method ?? 'GET',
        path: options.path ?? '/api/v1/webhooks',
        headers,
      },
      (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => (text += chunk));
        res.on('end', () =>
          resolve({ status: res.statusCode ?? 0, json: text ? JSON.parse(text) : undefined }),
        );
      },
    );
    req.on('error', reject);
    req.end(options.body);
  });
}

describe('on a loopback address (the default)', () => {
  test('every loopback name of the same port is the gateway host: 127.0.0.1, localhost, *.localhost, [::1]', async () => {
    const gateway = await start();
    const port = new URL(gateway.baseUrl).port;
    for (const host of [
      `127.0.0.1:${port}`,
      `localhost:${port}`,
      `LocalHost:${port}`,
      `app.localhost:${port}`,
      `[::1]:${port}`,
      `127.0.0.2:${port}`,
    ]) {
      expect({ host, status: (await claim(gateway, host)).status }).toEqual({ host, status: 200 });
      const page = await claim(gateway, host, { path: '/_console/state' });
      expect({ host, status: page.status }).toEqual({ host, status: 200 });
    }
  });

  test('another name, or a loopback name of another port, is 403 naming the host to use, on the API and the console', async () => {
    const gateway = await start();
    const port = Number(new URL(gateway.baseUrl).port);
    for (const host of [
      'evil.test',
      `evil.test:${port}`,
      `localhost:${port + 1}`,
      `127.0.0.1.nip.io:${port}`,
    ]) {
      const api = await claim(gateway, host);
      expect({ host, status: api.status, code: api.json.error.code }).toEqual({
        host,
        status: 403,
        code: 'forbidden',
      });
      expect(api.json.error.message).toContain(`use 127.0.0.1:${port} or localhost:${port}`);
      const page = await claim(gateway, host, { path: '/_console/state' });
      expect({ host, status: page.status }).toEqual({ host, status: 403 });
      expect(page.json.error.message).toContain(`use 127.0.0.1:${port}`);
    }
  });
});

describe('on a wildcard address (0.0.0.0)', () => {
  test('a request claiming host and origin evil.test is refused: no job, no webhook, no state', async () => {
    const gateway = await start({ host: '0.0.0.0' });
    const port = new URL(gateway.baseUrl).port;
    const evil = { origin: `http://evil.test:${port}` };
    const job = await claim(gateway, `evil.test:${port}`, {
      ...evil,
      method: 'POST',
      path: '/_console/jobs',
      body: '{"prompt":"p"}',
    });
    expect(job.status).toBe(403);
    expect(job.json.error.message).toContain(`use 127.0.0.1:${port}`);
    const state = await claim(gateway, `evil.test:${port}`, { path: '/_console/state' });
    expect(state.status).toBe(403);
    const api = await claim(gateway, `evil.test:${port}`, {
      ...evil,
      method: 'POST',
      path: '/api/v1/images/generate',
      body: '{"model":"m","prompt":"p"}',
    });
    expect(api.status).toBe(403);
    // Nothing was made: the account's own view has no job.
    const own = await claim(gateway, `127.0.0.1:${port}`, { path: '/_console/state' });
    expect(own.json.jobs).toEqual([]);
  });

  test("IP literals, loopback names and this machine's name of the same port are served", async () => {
    const gateway = await start({ host: '0.0.0.0' });
    const port = new URL(gateway.baseUrl).port;
    for (const host of [
      `127.0.0.1:${port}`,
      `localhost:${port}`,
      `10.1.2.3:${port}`,
      `[fe80::1]:${port}`,
      `${hostname()}:${port}`,
    ]) {
      expect({ host, status: (await claim(gateway, host)).status }).toEqual({ host, status: 200 });
    }
  });
});

describe('allowedHosts', () => {
  test('adds names: "name" with the port listened on, or "name:port" exactly', async () => {
    const gateway = await start({ allowedHosts: ['gateway.internal', 'proxy.test:8080'] });
    const port = new URL(gateway.baseUrl).port;
    expect((await claim(gateway, `gateway.internal:${port}`)).status).toBe(200);
    expect((await claim(gateway, 'proxy.test:8080')).status).toBe(200);
    expect((await claim(gateway, `proxy.test:${port}`)).status).toBe(403);
  });

  test('a list that is not host names is refused with invalid_options', async () => {
    await expect(startGateway({ allowedHosts: ['http://x/'] })).rejects.toMatchObject({
      code: 'invalid_options',
      message: expect.stringContaining('allowedHosts'),
    });
  });
});
