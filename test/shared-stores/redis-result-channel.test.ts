// Two instances of an app share job results over the real Redis on 127.0.0.1:6379: a delivery
// received by one wakes a wait on the other, with no poll. Skipped (one line) when Redis is not
// running, unless CI=true.
import { once } from 'node:events';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { randomBytes } from 'node:crypto';
import { Redis } from 'ioredis';
import { createReceiver, type Receiver } from 'jobhook';
import { createClient } from 'jobhook/client';
import { nodeHandler } from 'jobhook/node';
import { startGateway } from 'jobhook/testing';
import { afterEach, describe, expect, test, vi } from 'vitest';
import { redisDedupeStore, redisResultChannel } from 'jobhook/redis';
import { SECRET } from '../fixtures.js';

const REDIS_URL = 'redis://127.0.0.1:6379';

async function redisIsUp(): Promise<boolean> {
  const probe = new Redis(REDIS_URL, {
    lazyConnect: true,
    maxRetriesPerRequest: 0,
    retryStrategy: () => null,
  });
  probe.on('error', () => undefined);
  try {
    await probe.connect();
    return (await probe.ping()) === 'PONG';
  } catch {
    return false;
  } finally {
    probe.disconnect();
  }
}

const up = await redisIsUp();
if (!up && process.env.CI === 'true') throw new Error(`Redis is not running at ${REDIS_URL}, and CI=true.`);
if (!up) console.warn(`Skipping the Redis result channel tests: no Redis at ${REDIS_URL}.`);

const cleanups: (() => Promise<unknown> | void)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/** A fresh prefix per test: nothing this run publishes reaches another run's subscribers. */
const prefix = () => `jobhook-test:${randomBytes(6).toString('hex')}:`;

function redis(): Redis {
  const client = new Redis(REDIS_URL);
  cleanups.push(() => client.quit());
  return client;
}

/** Resolves once `count` connections subscribe to the channel (the subscription is asynchronous). */
async function subscribed(admin: Redis, channel: string, count: number) {
  for (;;) {
    const [, subscribers] = (await admin.pubsub('NUMSUB', channel)) as [string, number];
    if (Number(subscribers) >= count) return;
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

async function instance(
  channelPrefix: string,
  lines: string[] = [],
  via: 'channel' | 'store' = 'channel',
): Promise<{ receiver: Receiver; url: string }> {
  const receiver = createReceiver({
    secret: SECRET,
    results: redisResultChannel({ redis: redis(), prefix: channelPrefix }),
    ...(via === 'store' && {
      dedupe: redisDedupeStore({ redis: redis(), prefix: channelPrefix, ttlMs: 60_000 }),
    }),
    logger: { error: (line) => lines.push(line) },
  });
  cleanups.push(() => receiver.close());
  const server = createServer(nodeHandler(receiver, { path: '/webhooks' }));
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  cleanups.push(() => new Promise((resolve) => server.close(resolve)));
  return { receiver, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/webhooks` };
}

describe.skipIf(!up)('redisResultChannel', () => {
  test('a delivery to instance B wakes the wait on instance A, with no poll; also one that came first', async () => {
    const channelPrefix = prefix();
    const a = await instance(channelPrefix);
    const b = await instance(channelPrefix);
    await subscribed(redis(), `${channelPrefix}results`, 2);

    const gateway = await startGateway({ jobs: { stepMs: 1 } });
    cleanups.push(() => gateway.close());
    const client = createClient({ apiKey: gateway.apiKey, baseUrl: gateway.baseUrl });
    await b.receiver.register({ client, url: b.url }); // only B gets deliveries

    const task = await client.images.generateAndWait(
      { model: 'm', prompt: 'p' },
      { receiver: a.receiver, pollIntervalMs: 60_000 },
    );
    expect(task).toMatchObject({ status: 'completed', image_url: expect.stringMatching(/^https:/) });

    // A result B received before A started waiting is in A's recent results already.
    const { task_id } = await client.images.generate({ model: 'm', prompt: 'p' });
    await gateway.settled();
    // B has answered; its result reaches A over Redis pub/sub a moment later (a wait started
    // before that polls at once, which is right: this test is about the result that came first).
    await vi.waitFor(() => expect(a.receiver.results.get(task_id)).toBeDefined(), { timeout: 5000 });
    await expect(
      client.images.waitFor(task_id, { receiver: a.receiver, pollIntervalMs: 60_000 }),
    ).resolves.toMatchObject({
      task_id,
    });
    const polls = gateway.requests.filter((r) => r.method === 'GET' && r.path.startsWith('/api/v1/images/'));
    expect(polls).toHaveLength(0);
    expect(a.receiver.results.watching).toBe(0);
  });

  test('beside redisDedupeStore, the channel passed as `results` shares them (the store opens none itself)', async () => {
    const channelPrefix = prefix();
    const a = await instance(channelPrefix, [], 'store');
    const b = await instance(channelPrefix, [], 'store');
    await subscribed(redis(), `${channelPrefix}results`, 2);
    const gateway = await startGateway({ jobs: { stepMs: 1 } });
    cleanups.push(() => gateway.close());
    const client = createClient({ apiKey: gateway.apiKey, baseUrl: gateway.baseUrl });
    await b.receiver.register({ client, url: b.url });
    const task = await client.images.generateAndWait(
      { model: 'm', prompt: 'p' },
      { receiver: a.receiver, pollIntervalMs: 60_000 },
    );
    expect(task).toMatchObject({ status: 'completed' });
    const polls = gateway.requests.filter((r) => r.method === 'GET' && r.path.startsWith('/api/v1/images/'));
    expect(polls).toHaveLength(0);
  });

  test('a job.failed crosses too, and a message that is not a result is ignored and logged', async () => {
    const channelPrefix = prefix();
    const lines: string[] = [];
    const a = await instance(channelPrefix, lines);
    const admin = redis();
    await subscribed(admin, `${channelPrefix}results`, 1);
    await admin.publish(`${channelPrefix}results`, '{"taskId":"task_x","status":"completed","data":{}}');
    await admin.publish(`${channelPrefix}results`, 'not json');
    const woken = new Promise((resolve) => a.receiver.results.watch('task_f', resolve));
    await admin.publish(
      `${channelPrefix}results`,
      JSON.stringify({
        taskId: 'task_f',
        status: 'failed',
        data: { task_id: 'task_f', status: 'failed', error: { code: 'c', message: 'm' } },
      }),
    );
    expect(await woken).toMatchObject({ taskId: 'task_f', status: 'failed' });
    expect(a.receiver.results.get('task_x')).toBeUndefined();
    expect(lines.filter((line) => /not a job result/.test(line))).toHaveLength(2);
  });

  test('receiver.close() ends the subscription', async () => {
    const channelPrefix = prefix();
    const admin = redis();
    const a = await instance(channelPrefix);
    await subscribed(admin, `${channelPrefix}results`, 1);
    await a.receiver.close();
    const [, subscribers] = (await admin.pubsub('NUMSUB', `${channelPrefix}results`)) as [string, number];
    expect(Number(subscribers)).toBe(0);
  });

  test('refuses anything but an ioredis client', () => {
    // @ts-expect-error: no client
    expect(() => redisResultChannel({})).toThrow(/ioredis client/);
  });
});
