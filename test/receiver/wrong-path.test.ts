// A receiver mounted at another path than the one registered: the gateway's deliveries get the
// app's 404 (no route there) or 405 (a route there for another method), and after register()
// alone the receiver reads the webhook's counters and says so.
import { createServer, type RequestListener } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createReceiver } from 'jobhook';
import { createClient } from 'jobhook/client';
import { nodeHandler } from 'jobhook/node';
import { startGateway } from 'jobhook/testing';
import { afterEach, expect, it, vi } from 'vitest';
import { SECRET } from '../fixtures.js';

const closers: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  vi.useRealTimers();
  for (const close of closers.splice(0).reverse()) await close();
});

/** What the app answers a POST to /hooks/gateway, the path registered; it mounts the receiver at /webhooks. */
const apps = {
  404: (response) => void response.writeHead(404).end('Not Found'),
  // A page there, for GET only: what Express or Hono answer a POST to a route of another method.
  405: (response) => void response.writeHead(405, { allow: 'GET' }).end('Method Not Allowed'),
} satisfies Record<number, (response: Parameters<RequestListener>[1]) => void>;

/** A receiver in an app that answers `status` at the registered path, and the gateway it registers with. */
async function mountedElsewhere(status: keyof typeof apps) {
  const gateway = await startGateway({ jobs: { auto: false }, deliveries: { retryDelaysMs: [] } });
  closers.push(() => gateway.close());
  // The client's calls, as it makes them: a look at the webhook's counters is a GET of the list.
  const listed: Promise<unknown>[] = [];
  const client = createClient({
    baseUrl: gateway.baseUrl,
    apiKey: gateway.apiKey,
    fetch: (input, init) => {
      const called = fetch(input, init);
      if (
        (init?.method ?? 'GET') === 'GET' &&
        (input instanceof Request ? input.url : input instanceof URL ? input.href : input).endsWith(
          '/api/v1/webhooks',
        )
      )
        listed.push(called);
      return called;
    },
  });
  const lines: string[] = [];
  const receiver = createReceiver({
    secret: SECRET,
    logger: { error: (text) => void lines.push(text), warn: () => undefined },
  }).onJobCompleted(() => undefined);
  closers.push(() => receiver.close());
  const handler = nodeHandler(receiver);
  const server = createServer((request, response) => {
    if (request.url?.startsWith('/webhooks')) return void handler(request, response);
    if (request.url?.startsWith('/hooks/gateway') && request.method === 'GET')
      return void response.writeHead(200).end('the gateway hooks page');
    apps[status](response);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  closers.push(() => new Promise((resolve) => server.close(resolve)));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hooks/gateway`;
  return { gateway, client, receiver, url, lines, listed };
}

/**
 * Registers with `registerOptions`, has the gateway deliver one job to the wrong path, then moves
 * the fake clock (the waits between looks) until the check says so or has made all its looks:
 * the line, if any, and how far the clock moved.
 */
async function check(status: keyof typeof apps, checkMountAfterMs?: number) {
  const { gateway, client, receiver, url, lines, listed } = await mountedElsewhere(status);
  // Only the timers are fake (the waits between looks); the sockets and the gateway are real.
  vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
  const turn = () => new Promise((resolve) => setImmediate(resolve));
  await receiver.register({ client, url, ...(checkMountAfterMs !== undefined && { checkMountAfterMs }) });
  // The check's first reading of the counters (its baseline) is made as register() returns (after
  // its own readings and the alarm's): once each is answered, a failed delivery is one more.
  await Promise.all(listed);
  const { task_id } = await client.images.generate({ model: 'm', prompt: 'a fox' });
  gateway.advanceJob(task_id);
  gateway.advanceJob(task_id);
  await gateway.settled();
  expect(gateway.deliveries.map((attempt) => attempt.status)).toEqual([status]);

  // A step of the clock, then the event loop's turn; a look's GET is let finish before the next step.
  const afterMs = checkMountAfterMs ?? 30_000;
  const stepMs = Math.max(1, Math.round(afterMs / 30));
  let elapsedMs = 0;
  let looks = listed.length;
  // Five looks, each after twice the wait before: 31 times the first wait in all.
  while (lines.length === 0 && elapsedMs <= 31 * afterMs + stepMs) {
    await vi.advanceTimersByTimeAsync(stepMs);
    elapsedMs += stepMs;
    await turn();
    if (listed.length > looks) {
      await Promise.all(listed);
      looks = listed.length;
      for (let i = 0; i < 20 && lines.length === 0; i++) await turn();
    }
  }
  return { lines, elapsedMs };
}

for (const status of [404, 405] as const) {
  it(`deliveries answered ${status} by the app, with register()'s defaults: one error line names the registered path and the fix, 30 s on`, async () => {
    const { lines, elapsedMs } = await check(status);
    expect(lines).toEqual([
      expect.stringMatching(
        new RegExp(
          `the gateway's deliveries to /hooks/gateway get HTTP ${status} from this app: they reach the app but not the receiver\\. ` +
            'Mount the receiver at /hooks/gateway, or register the path it is mounted at',
        ),
      ),
    ]);
    // The default first look (checkMountAfterMs 30 s) came no sooner, on the fake clock.
    expect(elapsedMs).toBeGreaterThanOrEqual(30_000);
  });
}

it('checkMountAfterMs sets the first look', async () => {
  const { lines, elapsedMs } = await check(404, 20);
  expect(lines).toEqual([expect.stringContaining('get HTTP 404 from this app')]);
  expect(elapsedMs).toBeGreaterThanOrEqual(20);
  expect(elapsedMs).toBeLessThan(30_000);
});
