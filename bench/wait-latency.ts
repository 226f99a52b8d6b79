/**
 * How long after a job ends does `client.images.generateAndWait` resolve? For each path: the
 * webhook to this instance, the webhook to another instance relayed by Redis pub/sub, and polling
 * (the webhook lost) with the default intervals. Jobs last 0.2 to 5 s (uniform), 50 at a time;
 * "end" is the moment the simulator finishes the job, "resolved" the moment the promise settles,
 * on one clock.
 *
 *   npx tsx bench/wait-latency.ts            (JOBS=50, REDIS_URL=redis://127.0.0.1:6379)
 */
import { once } from 'node:events';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { randomBytes } from 'node:crypto';
import { Redis } from 'ioredis';
import { createReceiver, type Receiver } from 'jobhook';
import type { ResultChannel } from 'jobhook/extend';
import { createClient, type WaitOptions } from 'jobhook/client';
import { nodeHandler } from 'jobhook/node';
import { startGateway, type Gateway } from 'jobhook/testing';
import { redisResultChannel } from 'jobhook/redis';

const JOBS = Number(process.env.JOBS ?? 50);
const SECRET = `whsec_${randomBytes(24).toString('base64')}`;

async function listening(receiver: Receiver): Promise<{ url: string; close: () => Promise<void> }> {
  const server = createServer(nodeHandler(receiver, { path: '/webhooks' })).listen(0, '127.0.0.1');
  await once(server, 'listening');
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/webhooks`,
    close: async () => {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
      await receiver.close();
    },
  };
}

/** Runs JOBS jobs through generateAndWait; returns the ms from each job's end to its resolution. */
async function measure(
  path: string,
  setup: (gateway: Gateway) => Promise<{ wait: WaitOptions; close: () => Promise<void> }>,
): Promise<void> {
  const gateway = await startGateway({ jobs: { auto: false }, rateLimit: false, maxConcurrentJobs: JOBS });
  const ended = new Map<string, number>();
  // The client's fetch notes each new task and ends it after a random 0.2 to 5 s.
  const fetchAndSchedule: typeof fetch = async (input, init) => {
    const response = await fetch(input, init);
    if (init?.method === 'POST' && response.url.endsWith('/images/generate')) {
      const { data } = (await response.clone().json()) as { data: { task_id: string } };
      setTimeout(
        () => {
          gateway.advanceJob(data.task_id);
          gateway.advanceJob(data.task_id);
          ended.set(data.task_id, performance.now());
        },
        200 + Math.random() * 4800,
      );
    }
    return response;
  };
  const client = createClient({ apiKey: gateway.apiKey, baseUrl: gateway.baseUrl, fetch: fetchAndSchedule });
  const { wait, close } = await setup(gateway);
  const latencies = await Promise.all(
    Array.from({ length: JOBS }, async (_, index) => {
      const task = await client.images.generateAndWait({ model: 'm', prompt: `job ${index}` }, wait);
      return performance.now() - ended.get(task.task_id)!;
    }),
  );
  await close();
  await gateway.close();
  latencies.sort((a, b) => a - b);
  const at = (q: number) => latencies[Math.min(latencies.length - 1, Math.floor(q * latencies.length))]!;
  console.log(
    `${path.padEnd(44)} median ${at(0.5).toFixed(1).padStart(7)} ms   p95 ${at(0.95).toFixed(1).padStart(7)} ms   max ${latencies.at(-1)!.toFixed(1).padStart(7)} ms`,
  );
}

console.log(
  `${JOBS} jobs per path, each lasting 0.2 to 5 s; time from the job's end to generateAndWait resolving`,
);

await measure('webhook to this instance', async (gateway) => {
  const receiver = createReceiver({ secret: SECRET });
  const app = await listening(receiver);
  await receiver.register({
    client: createClient({ apiKey: gateway.apiKey, baseUrl: gateway.baseUrl }),
    url: app.url,
  });
  return { wait: { receiver }, close: app.close };
});

const redisUrl = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
const redis = new Redis(redisUrl, { lazyConnect: true, retryStrategy: () => null });
const redisUp = await redis.connect().then(
  () => true,
  () => false,
);
if (redisUp) {
  await measure('webhook to another instance, via Redis', async (gateway) => {
    const prefix = `jobhook-bench:${randomBytes(6).toString('hex')}:`;
    const channel = (): ResultChannel => redisResultChannel({ redis, prefix });
    const here = createReceiver({ secret: SECRET, results: channel() });
    const there = createReceiver({ secret: SECRET, results: channel() });
    const a = await listening(here);
    const b = await listening(there);
    await there.register({
      client: createClient({ apiKey: gateway.apiKey, baseUrl: gateway.baseUrl }),
      url: b.url,
    });
    for (;;) {
      const [, count] = (await redis.pubsub('NUMSUB', `${prefix}results`)) as [string, number];
      if (Number(count) >= 2) break;
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
    return { wait: { receiver: here }, close: async () => void (await Promise.all([a.close(), b.close()])) };
  });
} else {
  console.log(`(no Redis at ${redisUrl}: the Redis path is not measured)`);
}
redis.disconnect();

await measure('polling, webhook lost (pollIntervalMs 1000)', async () => ({
  wait: {},
  close: async () => undefined,
}));
await measure('polling, webhook lost (receiver: 5000)', async () => {
  const receiver = createReceiver({ secret: SECRET }); // never registered: no delivery reaches it
  return { wait: { receiver }, close: () => receiver.close() };
});
