import { afterEach, describe, expect, expectTypeOf, test } from 'vitest';
import { createReceiver, type Receiver } from 'jobhook';
import { createClient, type GatewayClient } from 'jobhook/client';
import { startGateway, type Gateway, type GatewayOptions } from 'jobhook/testing';
import { mounts, type App, type Mount } from './end-to-end-servers.js';
import { deferred, SECRET } from '../fixtures.js';

const cleanups: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/**
 * The documented startup sequence: create the receiver, start listening, then register.
 * Returns once the webhook exists, so the test can submit jobs.
 */
async function startApp(
  mount: Mount,
  gateway: Gateway,
  receiver: Receiver,
): Promise<{ app: App; client: GatewayClient }> {
  const app = await mount.start(receiver);
  cleanups.push(() => app.close());
  const client = createClient({ apiKey: gateway.apiKey, baseUrl: gateway.baseUrl });
  const registration = await receiver.register({ client, url: app.url });
  expect(registration.created).toBe(true);
  return { app, client };
}

async function gatewayWith(options: GatewayOptions = {}) {
  const gateway = await startGateway({
    jobs: { stepMs: 1 },
    deliveries: { retryDelaysMs: [5, 5, 5] },
    ...options,
  });
  cleanups.push(() => gateway.close());
  return gateway;
}

describe.each(mounts)('end to end: $name', (mount) => {
  test('a job completes: the typed handler gets the task_id and image_url that images.get reports', async () => {
    const gateway = await gatewayWith();
    const receiver = createReceiver({ secret: SECRET });
    const completed = deferred<{ taskId: string; imageUrl: string }>();
    receiver.onJobCompleted((event) => {
      expectTypeOf(event.data.image_url).toEqualTypeOf<string>();
      completed.resolve({ taskId: event.data.task_id, imageUrl: event.data.image_url });
    });
    const { app, client } = await startApp(mount, gateway, receiver);

    const job = await client.images.generate({
      model: 'sim-1',
      prompt: 'a red bicycle',
      aspect_ratio: '4:3',
    });
    const seen = await completed.promise;
    const task = await client.images.get(job.task_id);
    expect(task.status).toBe('completed');
    expect(seen).toEqual({ taskId: job.task_id, imageUrl: task.image_url });

    await gateway.settled();
    expect(app.answered).toEqual([200]);
  });

  test('a job fails: the typed onJobFailed handler gets the task_id and the error', async () => {
    const gateway = await gatewayWith({
      jobs: {
        stepMs: 1,
        outcome: () => ({ status: 'failed', error: { code: 'content_policy', message: 'Refused.' } }),
      },
    });
    const receiver = createReceiver({ secret: SECRET });
    const failed = deferred<{ taskId: string; code: string }>();
    receiver.onJobFailed((event) => {
      expectTypeOf(event.data.error.code).toEqualTypeOf<string>();
      failed.resolve({ taskId: event.data.task_id, code: event.data.error.code });
    });
    receiver.onJobCompleted(() => {
      throw new Error('a failed job must not reach onJobCompleted');
    });
    const { client } = await startApp(mount, gateway, receiver);

    const job = await client.images.generate({ model: 'sim-1', prompt: 'something refused' });
    expect(await failed.promise).toEqual({ taskId: job.task_id, code: 'content_policy' });
    expect((await client.images.get(job.task_id)).status).toBe('failed');
  });

  test('a handler that fails twice is retried and runs to completion exactly once; counters match', async () => {
    const gateway = await gatewayWith();
    const receiver = createReceiver({ secret: SECRET });
    receiver.onError(() => undefined); // the two failures are expected; keep the test output clean
    let calls = 0;
    let completions = 0;
    const done = deferred<void>();
    receiver.onJobCompleted(() => {
      calls++;
      if (calls <= 2) throw new Error(`temporary failure ${calls}`);
      completions++;
      done.resolve();
    });
    const { app, client } = await startApp(mount, gateway, receiver);

    await client.images.generate({ model: 'sim-1', prompt: 'retry me' });
    await done.promise;
    await gateway.settled();

    expect({ calls, completions }).toEqual({ calls: 3, completions: 1 });
    expect(app.answered).toEqual([500, 500, 200]);
    const [webhook] = await client.webhooks.list();
    expect(webhook).toMatchObject({
      total_sent: app.answered.filter((status) => status < 300).length,
      total_failed: app.answered.filter((status) => status >= 300).length,
      last_error: null,
      last_sent_at: expect.any(String),
    });
    // All three attempts were one delivery: one webhook-id.
    expect(new Set(gateway.deliveries.map((d) => d.deliveryId)).size).toBe(1);
  });

  test('several jobs of both kinds: every delivery handled once, counters equal what the receiver answered', async () => {
    const gateway = await gatewayWith({
      jobs: {
        stepMs: 1,
        outcome: ({ prompt }) => (prompt.startsWith('bad') ? { status: 'failed' } : { status: 'completed' }),
      },
    });
    const receiver = createReceiver({ secret: SECRET });
    const handled = new Map<string, string>();
    receiver.onJobCompleted((event) => void handled.set(event.data.task_id, 'completed'));
    receiver.onJobFailed((event) => void handled.set(event.data.task_id, 'failed'));
    const { app, client } = await startApp(mount, gateway, receiver);

    const prompts = ['good 1', 'bad 1', 'good 2', 'bad 2', 'good 3'];
    const jobs = await Promise.all(
      prompts.map((prompt) => client.images.generate({ model: 'sim-1', prompt })),
    );
    await gateway.settled();

    for (const job of jobs)
      expect(handled.get(job.task_id)).toBe((await client.images.get(job.task_id)).status);
    const [webhook] = await client.webhooks.list();
    expect(webhook).toMatchObject({ total_sent: app.answered.length, total_failed: 0 });
    expect(app.answered).toHaveLength(prompts.length);
  });

  test('a restarted app reuses its webhook and still receives deliveries', async () => {
    const gateway = await gatewayWith();
    const receiver = createReceiver({ secret: SECRET });
    const completed = deferred<string>();
    receiver.onJobCompleted((event) => completed.resolve(event.data.task_id));
    const { app, client } = await startApp(mount, gateway, receiver);
    const again = await receiver.register({ client, url: app.url });
    expect(again.created).toBe(false);
    const job = await client.images.generate({ model: 'sim-1', prompt: 'p' });
    expect(await completed.promise).toBe(job.task_id);
    expect(await client.webhooks.list()).toHaveLength(1);
  });
});
