// A gateway address that is wrong (issue 44, item 7): a stale GATEWAY_URL names the address and
// the cause, a refused connection at startup is not waited out for 25 s, and a URL with no scheme
// or a relative one is refused with what was expected, by the client and by the simulator.
import { afterEach, describe, expect, test } from 'vitest';
import { createClient, registerWebhook, type GatewayError } from 'jobhook/client';
import { startGateway, type Gateway } from 'jobhook/testing';
import { SECRET } from '../fixtures.js';
import { freePort } from '../support/services.js';

const gateways: Gateway[] = [];
afterEach(async () => {
  for (const gateway of gateways.splice(0)) await gateway.close();
});

const noWait = async () => undefined;

describe('a gateway that nothing serves', () => {
  test('the failure names the address and the cause, not "fetch failed"', async () => {
    const port = await freePort(); // nobody listens there
    const client = createClient({
      apiKey: 'key',
      baseUrl: `http://127.0.0.1:${port}/prefix?token=x`,
      retries: 0,
    });
    const error = (await client.webhooks.list().catch((e: unknown) => e)) as GatewayError;
    expect(error.code).toBe('network_error');
    expect(error.message).toBe(
      `GET /api/v1/webhooks: could not reach the gateway at http://127.0.0.1:${port} (ECONNREFUSED: ` +
        'nothing accepts connections there; is the gateway running, and is baseUrl (GATEWAY_URL) right?).',
    );
  });

  test('register() at startup gives up on a refused connection after two quick retries', async () => {
    const port = await freePort();
    const client = createClient({ apiKey: 'key', baseUrl: `http://127.0.0.1:${port}` });
    const retries: number[] = [];
    const failure = registerWebhook(client, {
      url: 'https://app.example.com/webhooks',
      secret: SECRET,
      events: ['job.completed'],
      startupRetries: { sleep: noWait, onRetry: (_error, retry) => void retries.push(retry) },
    });
    await expect(failure).rejects.toMatchObject({ code: 'network_error', message: /ECONNREFUSED/ });
    expect(retries).toEqual([1, 2]); // not the six of a gateway that answers 503
  });
});

describe('a URL with no scheme, or a relative one', () => {
  test.each([
    [
      'localhost:4010',
      /`baseUrl` must be an absolute http:\/\/ or https:\/\/ URL, such as https:\/\/gateway\.example\.com; got a string with no scheme: begin it with http:\/\/ \(a local address\) or https:\/\/\.$/,
    ],
    ['gateway.example.com', /; got a string with no scheme: begin it with http:\/\//],
    ['/api', /; got a relative path: give the whole address, with scheme and host\.$/],
    ['ftp://gateway.example.com', /; got a string with the scheme ftp: where http: or https: is expected\.$/],
  ])('createClient({ baseUrl: %j }) says what was expected', (baseUrl, message) => {
    expect(() => createClient({ apiKey: 'key', baseUrl })).toThrow(message);
  });

  test('register() refuses a webhook url with no scheme before any request', async () => {
    const gateway = await startGateway();
    gateways.push(gateway);
    const client = createClient({ apiKey: gateway.apiKey, baseUrl: gateway.baseUrl });
    await expect(
      registerWebhook(client, { url: 'localhost:3000/webhooks', secret: SECRET, events: ['job.completed'] }),
    ).rejects.toThrow(/`url` must be an absolute .*; got a string with no scheme: begin it with http:\/\//);
    expect(gateway.requests.filter((r) => r.method === 'POST')).toEqual([]);
  });

  test('the simulator tells localhost:3000/webhooks it has no scheme, not "must use https"', async () => {
    const gateway = await startGateway();
    gateways.push(gateway);
    const response = await fetch(`${gateway.baseUrl}/api/v1/webhooks`, {
      method: 'POST',
      headers: { authorization: `Bearer ${gateway.apiKey}`, 'content-type': 'application/json' },
      body: JSON.stringify({ url: 'localhost:3000/webhooks', secret_key: SECRET, events: ['job.completed'] }),
    });
    expect(response.status).toBe(400);
    const text = await response.text();
    expect(text).toMatch(/got a string with no scheme: begin it with http:\/\//);
    expect(text).not.toMatch(/must use https/);
  });
});
