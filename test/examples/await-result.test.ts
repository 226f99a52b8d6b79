// examples/await-result end to end against the simulator: an endpoint that submits a job and
// answers with its image, whichever way the result arrives, and whichever way the wait ends.
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { createServer } from 'node:http';
import { once } from 'node:events';
import type { AddressInfo } from 'node:net';
import { fileURLToPath } from 'node:url';
import { Redis } from 'ioredis';
import { createClient } from 'jobhook/client';
import { startGateway, type Gateway, type GatewayOptions } from 'jobhook/testing';
import { afterEach, describe, expect, test } from 'vitest';
import { start, type AwaitResultOptions } from '../../examples/await-result/server.js';
import { redisResultChannel } from 'jobhook/redis';
import { SECRET } from '../fixtures.js';

const cleanups: (() => Promise<unknown> | void)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

const redisUp = await redisIsUp();
if (!redisUp && process.env.CI === 'true')
  throw new Error('Redis is not running on 127.0.0.1:6379, and CI=true.');
if (!redisUp)
  console.warn('Skipping the Redis case of the await-result example: no Redis on 127.0.0.1:6379.');

async function redisIsUp(): Promise<boolean> {
  const probe = new Redis('redis://127.0.0.1:6379', { lazyConnect: true, retryStrategy: () => null });
  probe.on('error', () => undefined);
  try {
    await probe.connect();
    return true;
  } catch {
    return false;
  } finally {
    probe.disconnect();
  }
}

const timeouts = () => process.getActiveResourcesInfo().filter((name) => name === 'Timeout').length;

async function simulator(options: GatewayOptions = {}): Promise<Gateway> {
  const gateway = await startGateway({ jobs: { stepMs: 1 }, rateLimit: false, ...options });
  cleanups.push(() => gateway.close());
  return gateway;
}

async function app(gateway: Gateway, options: Partial<AwaitResultOptions> = {}) {
  const started = await start({
    gatewayUrl: gateway.baseUrl,
    apiKey: gateway.apiKey,
    secret: SECRET,
    port: 0,
    pollIntervalMs: 60_000, // a poll would make these tests slow: they show where results come from
    ...options,
  });
  cleanups.push(() => started.close());
  return started;
}

function ask(url: string, prompt = 'a fox', signal?: AbortSignal) {
  return fetch(`${url}/images`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ prompt }),
    ...(signal && { signal }),
  });
}

const polls = (gateway: Gateway) =>
  gateway.requests.filter((r) => r.method === 'GET' && r.path.startsWith('/api/v1/images/')).length;

/** An address where nothing listens: deliveries there fail. */
async function deadUrl(): Promise<string> {
  const server = createServer().listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return `http://127.0.0.1:${port}`;
}

test('answers with the image URL, from the webhook, with no poll', async () => {
  const gateway = await simulator();
  const { url } = await app(gateway);
  const response = await ask(url);
  expect(response.status).toBe(200);
  const body = (await response.json()) as { task_id: string; image_url: string };
  expect(body).toEqual({
    task_id: expect.stringMatching(/^task_/),
    image_url: expect.stringMatching(/^https:/),
  });
  expect(polls(gateway)).toBe(0);
});

test('webhook lost: every delivery to the app fails, and polling answers', async () => {
  const gateway = await simulator();
  const { url } = await app(gateway, { publicUrl: await deadUrl(), pollIntervalMs: 20 });
  const response = await ask(url);
  expect(response.status).toBe(200);
  expect(polls(gateway)).toBeGreaterThan(0);
  expect(gateway.deliveries.length).toBeGreaterThan(0);
  expect(gateway.deliveries.every((attempt) => !attempt.ok)).toBe(true);
});

describe('webhook delivered to a second instance', () => {
  test('without a shared channel, polling answers on the first', async () => {
    const gateway = await simulator();
    const second = await app(gateway); // registered: it gets the deliveries
    const first = await app(gateway, { register: false, pollIntervalMs: 20 });
    const response = await ask(first.url);
    expect(response.status).toBe(200);
    expect(polls(gateway)).toBeGreaterThan(0);
    const { task_id } = (await response.json()) as { task_id: string };
    expect(second.receiver.results.get(task_id)?.status).toBe('completed');
  });

  test.skipIf(!redisUp)(
    'with redisResultChannel, the second instance wakes the first, with no poll',
    async () => {
      const prefix = `jobhook-test:${randomBytes(6).toString('hex')}:`;
      const redis = new Redis('redis://127.0.0.1:6379');
      cleanups.push(() => redis.quit());
      const gateway = await simulator();
      const second = await app(gateway, { results: redisResultChannel({ redis, prefix }) });
      const first = await app(gateway, { register: false, results: redisResultChannel({ redis, prefix }) });
      while (Number(((await redis.pubsub('NUMSUB', `${prefix}results`)) as [string, number])[1]) < 2) {
        await new Promise((resolve) => setTimeout(resolve, 5));
      }
      const response = await ask(first.url);
      expect(response.status).toBe(200);
      expect(polls(gateway)).toBe(0);
      expect(second.receiver.results.watching).toBe(0);
    },
  );
});

test('job failed: 502 with the job error', async () => {
  const gateway = await simulator({
    jobs: {
      stepMs: 1,
      outcome: () => ({
        status: 'failed',
        error: { code: 'generation_failed', message: 'Cannot draw that.' },
      }),
    },
  });
  const { url } = await app(gateway);
  const response = await ask(url, 'an impossible staircase');
  expect(response.status).toBe(502);
  expect(await response.json()).toEqual({
    task_id: expect.stringMatching(/^task_/),
    error: { code: 'generation_failed', message: 'Cannot draw that.' },
  });
});

test('time-out: 504 with the task id, and the job goes on at the gateway', async () => {
  const gateway = await simulator({ jobs: { auto: false } });
  const { url, client } = await app(gateway, { timeoutMs: 100 });
  const response = await ask(url);
  expect(response.status).toBe(504);
  const body = (await response.json()) as { task_id: string; error: { code: string; message: string } };
  expect(body.error.code).toBe('wait_timeout');
  expect(body.error.message).toMatch(/keeps running at the gateway/);
  expect(await client.images.get(body.task_id)).toMatchObject({ status: 'pending' });
});

test('abort through the signal: the caller hangs up, the wait stops and leaves nothing', async () => {
  const gateway = await simulator({ jobs: { auto: false } });
  const started = await app(gateway);
  const before = timeouts();
  const caller = new AbortController();
  const request = ask(started.url, 'a fox', caller.signal).catch((error: unknown) => error);
  while (started.waiting === 0 || started.receiver.results.watching === 0) {
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
  caller.abort();
  expect(await request).toMatchObject({ name: 'AbortError' });
  while (started.waiting > 0) await new Promise((resolve) => setTimeout(resolve, 5));
  expect(started.receiver.results.watching).toBe(0);
  expect(timeouts()).toBeLessThanOrEqual(before);
});

test('1,000 concurrent requests: all wait at once, all answered from their webhooks, nothing left', async () => {
  const count = 1000;
  const gateway = await simulator({ jobs: { auto: false }, maxConcurrentJobs: count, credits: count * 10 });
  // The app's client, watched: it notes each task id the gateway hands out, for advanceJob.
  const taskIds: string[] = [];
  const watchingFetch: typeof fetch = async (input, init) => {
    const response = await fetch(input, init);
    if (init?.method === 'POST' && response.url.endsWith('/images/generate')) {
      const { data } = (await response.clone().json()) as { data: { task_id: string } };
      taskIds.push(data.task_id);
    }
    return response;
  };
  const client = createClient({ apiKey: gateway.apiKey, baseUrl: gateway.baseUrl, fetch: watchingFetch });
  const started = await app(gateway, { client });
  const before = timeouts();

  // In batches of 100 (a listen backlog is 511): each batch is waiting before the next one starts.
  const responses: Promise<Response>[] = [];
  for (let batch = 1; batch <= count / 100; batch++) {
    for (let index = 0; index < 100; index++) responses.push(ask(started.url, `fox ${batch}.${index}`));
    // Waiting begins when the request arrives; watching once its job is submitted.
    await until(() => started.receiver.results.watching === batch * 100);
  }
  expect(started.waiting).toBe(count);
  // A thousand waits in progress hold one timer between them (plus what HTTP keeps): not 1,000.
  expect(timeouts() - before).toBeLessThan(10);

  for (let batch = 0; batch < count / 100; batch++) {
    for (const taskId of taskIds.slice(batch * 100, batch * 100 + 100)) {
      gateway.advanceJob(taskId);
      gateway.advanceJob(taskId);
    }
    await until(() => started.waiting <= count - (batch + 1) * 100);
  }
  const answered = await Promise.all(responses);
  const bodies = (await Promise.all(answered.map((response) => response.json()))) as { image_url: string }[];

  expect(answered.every((response) => response.status === 200)).toBe(true);
  expect(new Set(bodies.map((body) => body.image_url)).size).toBe(count);
  expect(polls(gateway)).toBe(0);
  expect(started.waiting).toBe(0);
  expect(started.receiver.results.watching).toBe(0);
  expect(timeouts()).toBeLessThanOrEqual(before);
}, 600_000); // against a hang: a thousand waits take minutes on a busy machine

async function until(condition: () => boolean): Promise<void> {
  while (!condition()) await new Promise((resolve) => setTimeout(resolve, 5));
}

test('runs directly with tsx on the simulator, as its header says', async () => {
  const child = spawn(process.execPath, ['--import', 'tsx', 'examples/await-result/server.ts'], {
    cwd: fileURLToPath(new URL('../..', import.meta.url)),
    env: { ...process.env, PORT: '0', GATEWAY_URL: '' },
  });
  cleanups.push(async () => {
    const exited = once(child, 'exit');
    child.kill();
    await exited;
  });
  let output = '';
  const url = await new Promise<string>((resolve, reject) => {
    child.stdout.on('data', (chunk: Buffer) => {
      output += chunk.toString();
      const match = /POST (\S+)\/images/.exec(output);
      if (match) resolve(match[1]!);
    });
    child.once('exit', (code) => reject(new Error(`exited (${code}): ${output}`)));
  });
  const response = await ask(url);
  expect(response.status).toBe(200);
  expect(await response.json()).toMatchObject({ image_url: expect.stringMatching(/^https:/) });
});
