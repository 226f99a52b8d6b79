// A receiver mounted at another path than the one registered: the gateway's deliveries get the
// app's 404, and after register() alone the receiver reads the webhook's counters and says so.
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createReceiver } from 'jobhook';
import { createClient } from 'jobhook/client';
import { nodeHandler } from 'jobhook/node';
import { startGateway } from 'jobhook/testing';
import { afterEach, expect, it } from 'vitest';
import { SECRET } from '../fixtures.js';

const closers: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const close of closers.splice(0).reverse()) await close();
});

it('deliveries answered 404 by the app: one error line names the registered path and the fix', async () => {
  const gateway = await startGateway({ jobs: { stepMs: 1 }, deliveries: { retryDelaysMs: [] } });
  closers.push(() => gateway.close());
  const client = createClient({ baseUrl: gateway.baseUrl, apiKey: gateway.apiKey });
  let logged: (line: string) => void = () => undefined;
  const line = new Promise<string>((resolve) => (logged = resolve));
  const receiver = createReceiver({
    secret: SECRET,
    logger: { error: (text) => logged(text), warn: () => undefined },
  }).onJobCompleted(() => undefined);
  closers.push(() => receiver.close());
  // The app mounts the receiver at /webhooks and answers 404 anywhere else.
  const handler = nodeHandler(receiver);
  const server = createServer((request, response) => {
    if (request.url?.startsWith('/webhooks')) return void handler(request, response);
    response.writeHead(404).end('Not Found');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  closers.push(() => new Promise((resolve) => server.close(resolve)));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hooks/gateway`;

  await receiver.register({ client, url, checkMountAfterMs: 20 });
  await client.images.generate({ model: 'm', prompt: 'a fox' });
  await gateway.settled();

  const said = await line;
  expect(said).toContain('/hooks/gateway');
  expect(said).toMatch(/HTTP 404/);
  expect(said).toMatch(/Mount the receiver at \/hooks\/gateway, or register the path it is mounted at/);
});
