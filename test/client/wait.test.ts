// client.images.waitFor and generateAndWait against the simulator and a real receiver over HTTP:
// the webhook path, the polling path, the races between them, and every way a wait ends.
import { once } from 'node:events';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { getEventListeners } from 'node:events';
import { createReceiver, type Receiver } from 'jobhook';
import {
  createClient,
  GatewayError,
  JobFailedError,
  WaitTimeoutError,
  type GatewayClient,
} from 'jobhook/client';
import { nodeHandler } from 'jobhook/node';
import { startGateway, type Gateway, type GatewayOptions } from 'jobhook/testing';
import { afterEach, describe, expect, test } from 'vitest';
import { SECRET } from '../fixtures.js';

const cleanups: (() => Promise<unknown> | void)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

const timeouts = () => process.getActiveResourcesInfo().filter((name) => name === 'Timeout').length;

async function listen(server: Server): Promise<string> {
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  cleanups.push(() => new Promise((resolve) => server.close(resolve)));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}/webhooks`;
}

interface Setup {
  gateway: Gateway;
  client: GatewayClient;
  receiver: Receiver;
  /** GET /api/v1/images/... requests the simulator answered: the polls. */
  polls: () => number;
}

/** The simulator, and a receiver listening with its webhook registered (unless `webhook: false`). */
async function setup(
  options: GatewayOptions = {},
  app: { webhook?: 'receiver' | 'lost'; fetch?: typeof fetch } = {},
): Promise<Setup> {
  const gateway = await startGateway({ jobs: { stepMs: 1 }, rateLimit: false, ...options });
  cleanups.push(() => gateway.close());
  const client = createClient({
    apiKey: gateway.apiKey,
    baseUrl: gateway.baseUrl,
    ...(app.fetch && { fetch: app.fetch }),
  });
  const receiver = createReceiver({ secret: SECRET });
  cleanups.push(() => receiver.close());
  const url = await listen(createServer(nodeHandler(receiver, { path: '/webhooks' })));
  if (app.webhook === 'lost') {
    // Registered at an address where nothing answers: every delivery attempt fails.
    const nowhere = createServer();
    const dead = await listen(nowhere);
    nowhere.close();
    await receiver.register({ client, url: dead });
  } else {
    await receiver.register({ client, url });
  }
  const polls = () =>
    gateway.requests.filter((r) => r.method === 'GET' && r.path.startsWith('/api/v1/images/')).length;
  return { gateway, client, receiver, polls };
}

async function rejection(promise: Promise<unknown>): Promise<unknown> {
  return promise.then(
    () => {
      throw new Error('expected a rejection');
    },
    (error: unknown) => error,
  );
}

describe('the webhook path', () => {
  test('generateAndWait resolves from the delivery, with no poll', async () => {
    const { client, receiver, polls } = await setup();
    const task = await client.images.generateAndWait(
      { model: 'm', prompt: 'a fox' },
      { receiver, pollIntervalMs: 60_000 },
    );
    expect(task).toMatchObject({ task_id: expect.any(String), status: 'completed' });
    expect(task.image_url).toMatch(/^https:\/\//);
    expect(polls()).toBe(0);
    expect(receiver.results.watching).toBe(0);
  });

  test('a delivery that arrives before images.generate() has returned is not missed', async () => {
    const started: { gateway?: Gateway } = {};
    // The client's fetch holds back the submission's answer until the job ended and was delivered.
    const slowAnswer: typeof fetch = async (input, init) => {
      const response = await fetch(input, init);
      if (init?.method === 'POST' && response.url.endsWith('/images/generate'))
        await started.gateway!.settled();
      return response;
    };
    const ready = await setup({}, { fetch: slowAnswer });
    started.gateway = ready.gateway;
    const task = await ready.client.images.generateAndWait(
      { model: 'm', prompt: 'quick' },
      { receiver: ready.receiver, pollIntervalMs: 60_000 },
    );
    expect(ready.gateway.deliveries).toMatchObject([{ taskId: task.task_id, ok: true }]);
    expect(ready.polls()).toBe(0);
  });

  test('waitFor called after the result arrived finds it at once', async () => {
    const { gateway, client, receiver, polls } = await setup();
    const { task_id } = await client.images.generate({ model: 'm', prompt: 'p' });
    await gateway.settled();
    await expect(client.images.waitFor(task_id, { receiver })).resolves.toMatchObject({ task_id });
    expect(polls()).toBe(0);
  });

  test('a failed job rejects with JobFailedError: task id, code and message', async () => {
    const { client, receiver, polls } = await setup({
      jobs: {
        stepMs: 1,
        outcome: () => ({ status: 'failed', error: { code: 'nsfw', message: 'Refused by the filter.' } }),
      },
    });
    const error = await rejection(
      client.images.generateAndWait({ model: 'm', prompt: 'p' }, { receiver, pollIntervalMs: 60_000 }),
    );
    expect(error).toBeInstanceOf(JobFailedError);
    expect(error).toBeInstanceOf(GatewayError);
    expect(error).toMatchObject({ code: 'nsfw', message: 'Refused by the filter.', taskId: /^task_/ });
    expect(polls()).toBe(0);
  });
});

describe('the polling path', () => {
  test('without a receiver, polling resolves', async () => {
    const pollTimes: number[] = [];
    const timedFetch: typeof fetch = (input, init) => {
      if (init?.method === 'GET') pollTimes.push(performance.now());
      return fetch(input, init);
    };
    const { gateway, client } = await setup({ jobs: { auto: false } }, { fetch: timedFetch });
    const { task_id } = await client.images.generate({ model: 'm', prompt: 'p' });
    const waiting = client.images.waitFor(task_id, { pollIntervalMs: 5 });
    while (pollTimes.length < 5) await new Promise((resolve) => setTimeout(resolve, 5));
    // The first poll comes at once (waitFor: the task may be done), then again and again while
    // the job runs. (How far apart they come is not asserted: wall-clock gaps on a shared machine
    // made that check flaky both ways.)
    expect(pollTimes[1]!).toBeGreaterThan(pollTimes[0]!);
    gateway.advanceJob(task_id);
    gateway.advanceJob(task_id);
    await expect(waiting).resolves.toMatchObject({ task_id, status: 'completed' });
  });

  test('a lost webhook: the receiver never hears of it, polling resolves', async () => {
    const { gateway, client, receiver, polls } = await setup({}, { webhook: 'lost' });
    const task = await client.images.generateAndWait(
      { model: 'm', prompt: 'p' },
      { receiver, pollIntervalMs: 10 },
    );
    expect(task.status).toBe('completed');
    expect(polls()).toBeGreaterThan(0);
    expect(gateway.deliveries.some((d) => d.taskId === task.task_id && !d.ok)).toBe(true);
  });

  test('a failed job found by polling rejects with JobFailedError', async () => {
    const { client, polls } = await setup({
      jobs: { stepMs: 1, outcome: () => ({ status: 'failed' }) },
    });
    const error = await rejection(
      client.images.generateAndWait({ model: 'm', prompt: 'p' }, { pollIntervalMs: 5 }),
    );
    expect(error).toMatchObject({ name: 'JobFailedError', code: 'generation_failed' });
    expect(polls()).toBeGreaterThan(0);
  });

  test('a poll that fails with 500 or a lost connection is followed by another', async () => {
    const { gateway, client } = await setup({ jobs: { auto: false } });
    const { task_id } = await client.images.generate({ model: 'm', prompt: 'p' });
    gateway.failNext({ method: 'GET', status: 500, times: 3 });
    const waiting = client.images.waitFor(task_id, { pollIntervalMs: 5 });
    await new Promise((resolve) => setTimeout(resolve, 80));
    gateway.advanceJob(task_id);
    gateway.advanceJob(task_id);
    await expect(waiting).resolves.toMatchObject({ task_id });
  });

  test('a poll refused for good (404) rejects with its GatewayError', async () => {
    const { client } = await setup();
    const error = await rejection(client.images.waitFor('task_nonexistent', { pollIntervalMs: 5 }));
    expect(error).toMatchObject({ name: 'GatewayError', status: 404, code: 'not_found' });
  });
});

describe('how a wait ends otherwise', () => {
  test('past timeoutMs: a WaitTimeoutError that carries the task id; the job goes on', async () => {
    const { gateway, client, receiver } = await setup({ jobs: { auto: false } });
    const before = timeouts();
    const error = await rejection(
      client.images.generateAndWait({ model: 'm', prompt: 'p' }, { receiver, timeoutMs: 50 }),
    );
    expect(error).toBeInstanceOf(WaitTimeoutError);
    const { taskId } = error as WaitTimeoutError;
    expect(error).toMatchObject({ code: 'wait_timeout', status: 0, timeoutMs: 50 });
    expect((error as Error).message).toMatch(
      /did not end within 50 ms\. The job keeps running at the gateway/,
    );
    expect((error as Error).message).toContain(taskId);
    expect(receiver.results.watching).toBe(0);
    expect(timeouts()).toBeLessThanOrEqual(before); // other parts may have dropped one meanwhile

    gateway.advanceJob(taskId);
    gateway.advanceJob(taskId);
    await expect(client.images.waitFor(taskId, { receiver })).resolves.toMatchObject({ task_id: taskId });
  });

  test('an abort rejects with the signal reason and leaves no timer, listener or watcher', async () => {
    const { client, receiver } = await setup({ jobs: { auto: false } });
    const { task_id } = await client.images.generate({ model: 'm', prompt: 'p' });
    const before = timeouts();
    const controller = new AbortController();
    const waiting = client.images.waitFor(task_id, { receiver, signal: controller.signal });
    expect(getEventListeners(controller.signal, 'abort')).toHaveLength(1);
    expect(receiver.results.watching).toBe(1);
    controller.abort(new Error('the user left'));
    await expect(waiting).rejects.toThrow('the user left');
    expect(getEventListeners(controller.signal, 'abort')).toHaveLength(0);
    expect(receiver.results.watching).toBe(0);
    expect(timeouts()).toBeLessThanOrEqual(before); // other parts may have dropped one meanwhile
  });

  test('an aborted signal stops generateAndWait before it submits', async () => {
    const { gateway, client } = await setup();
    const reason = new Error('already gone');
    await expect(
      client.images.generateAndWait({ model: 'm', prompt: 'p' }, { signal: AbortSignal.abort(reason) }),
    ).rejects.toBe(reason);
    expect(gateway.requests.filter((r) => r.method === 'POST' && r.path.includes('images'))).toHaveLength(0);
  });

  test('a bad option is a JobhookError (invalid_options), before any credit is spent', async () => {
    const { gateway, client } = await setup();
    await expect(
      client.images.generateAndWait({ model: 'm', prompt: 'p' }, { pollIntervalMs: 0 }),
    ).rejects.toMatchObject({ name: 'JobhookError', code: 'invalid_options' });
    await expect(client.images.waitFor('task_x', { timeoutMs: -1 })).rejects.toThrow(/timeoutMs/);
    await expect(client.images.waitFor('')).rejects.toThrow(/task_id/);
    // @ts-expect-error: not a receiver
    await expect(client.images.waitFor('task_x', { receiver: {} })).rejects.toThrow(/receiver/);
    expect(gateway.requests.filter((r) => r.method === 'POST' && r.path.includes('images'))).toHaveLength(0);
  });
});
