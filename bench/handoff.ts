/**
 * The BullMQ hand-off, measured. Not part of `npm run bench` (it needs Redis and takes a while):
 *
 *   npx tsx bench/handoff.ts            (BENCH_DELIVERIES=10000 for more)
 *
 * 1. Time per delivery through `receiver.receive` (verify, parse, validate, then: the handler with
 *    the in-memory store, the handler with the Redis store, or the hand-off to BullMQ), one at a
 *    time and 32 at a time, in this process.
 * 2. End to end: signed deliveries over HTTP (keep-alive, 32 in flight) to 2 receiver processes
 *    that hand off to BullMQ, and 2 worker processes that run the handler; deliveries per second
 *    until every receiver answered, and until every handler ran.
 *
 * Uses Redis at JOBHOOK_REDIS_URL (default redis://127.0.0.1:6379) under a queue name and a key
 * prefix of its own, and removes them.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes, randomUUID } from 'node:crypto';
import { Agent, request } from 'node:http';
import { fileURLToPath } from 'node:url';
import { Queue } from 'bullmq';
import { Redis } from 'ioredis';
import { createReceiver, memoryDedupeStore, type ReceiverOptions } from 'jobhook';
import { bullmqHandoff } from 'jobhook/bullmq';
import { redisDedupeStore } from 'jobhook/redis';
import { signDelivery } from 'jobhook/testing';

const REDIS_URL = process.env.JOBHOOK_REDIS_URL || 'redis://127.0.0.1:6379';
const N = Number(process.env.BENCH_DELIVERIES) || 4000;
const SECRET = `whsec_${randomBytes(24).toString('base64')}`;
const tag = randomBytes(4).toString('hex');
const PREFIX = `jobhook-bench-${tag}`;
const QUEUE = 'jobhook';

function deliveries(count: number) {
  return Array.from({ length: count }, () => {
    const payload = {
      id: `evt_${randomUUID()}`,
      type: 'job.completed',
      created_at: '2026-11-21T10:00:00Z',
      data: { task_id: `task_${randomUUID()}`, status: 'completed', image_url: 'https://img.example/1.png' },
    };
    return signDelivery({ secret: SECRET, payload });
  });
}

/** Runs `work` for each item, `inFlight` at a time; seconds taken. */
async function pool<T>(items: T[], inFlight: number, work: (item: T) => Promise<void>) {
  let next = 0;
  const started = process.hrtime.bigint();
  await Promise.all(
    Array.from({ length: inFlight }, async () => {
      while (next < items.length) await work(items[next++]!);
    }),
  );
  return Number(process.hrtime.bigint() - started) / 1e9;
}

/** µs per delivery through receive(), one at a time and 32 at a time. */
async function perDelivery(options: Omit<ReceiverOptions, 'secret'>) {
  const receiver = createReceiver({ ...options, secret: SECRET }).onJobCompleted(() => undefined);
  const run = async (count: number, inFlight: number) => {
    const batch = deliveries(count);
    const seconds = await pool(batch, inFlight, async (d) => {
      const answer = await receiver.receive({ headers: d.headers, body: d.body });
      if (answer.status !== 200) throw new Error(`answered ${answer.status}: ${answer.body}`);
    });
    return (seconds * 1e6) / count;
  };
  try {
    await run(200, 1); // warm-up
    return { sequential: await run(N / 2, 1), concurrent: await run(N / 2, 32) };
  } finally {
    await receiver.close(); // a Redis store's result channel holds a subscription until then
  }
}

function startProcess(env: Record<string, string>): Promise<ChildProcess> {
  const script = fileURLToPath(new URL('./handoff-process.ts', import.meta.url));
  const child = spawn(process.execPath, ['--import', 'tsx', script], {
    env: { ...process.env, ...env, REDIS_URL, QUEUE, PREFIX, SECRET },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  return new Promise((resolve, reject) => {
    child.stdout.on('data', (data: Buffer) => {
      if (/listening|ready/.test(data.toString())) resolve(child);
    });
    child.once('exit', (code) => reject(new Error(`a bench process exited (${code})`)));
  });
}

async function endToEnd(redis: Redis) {
  const ports = [await freePort(), await freePort()];
  const children = [
    ...(await Promise.all(ports.map((port) => startProcess({ ROLE: 'receiver', PORT: String(port) })))),
    ...(await Promise.all([0, 1].map(() => startProcess({ ROLE: 'worker' })))),
  ];
  const agent = new Agent({ keepAlive: true, maxSockets: 32 });
  try {
    const post = (port: number, d: ReturnType<typeof signDelivery>) =>
      new Promise<void>((resolve, reject) => {
        const req = request({
          port,
          host: '127.0.0.1',
          method: 'POST',
          path: '/',
          agent,
          headers: d.headers,
        });
        req.on('response', (res) => {
          res.resume();
          res.on('end', () =>
            res.statusCode === 200 ? resolve() : reject(new Error(`HTTP ${res.statusCode}`)),
          );
        });
        req.on('error', reject);
        req.end(d.body);
      });
    const send = async (count: number) => {
      const batch = deliveries(count);
      const before = Number((await redis.get(`${PREFIX}:handled`)) ?? 0);
      const started = process.hrtime.bigint();
      let i = 0;
      const answered = await pool(batch, 32, (d) => post(ports[i++ % 2]!, d));
      while (Number((await redis.get(`${PREFIX}:handled`)) ?? 0) < before + count) {
        await new Promise((resolve) => setTimeout(resolve, 5));
      }
      const handled = Number(process.hrtime.bigint() - started) / 1e9;
      return { answeredPerSecond: count / answered, handledPerSecond: count / handled };
    };
    await send(300); // warm-up
    return await send(N);
  } finally {
    agent.destroy();
    for (const child of children) child.kill('SIGKILL');
  }
}

async function freePort(): Promise<number> {
  const { createServer } = await import('node:net');
  const server = createServer().listen(0, '127.0.0.1');
  await new Promise((resolve) => server.once('listening', resolve));
  const { port } = server.address() as { port: number };
  await new Promise((resolve) => server.close(resolve));
  return port;
}

const redis = new Redis(REDIS_URL);
const queue = new Queue(QUEUE, { connection: { url: REDIS_URL }, prefix: `${PREFIX}-inline` });
try {
  console.log(`µs per delivery through receive(), ${N / 2} deliveries each (one at a time | 32 at a time):`);
  const results = {
    'memory store': await perDelivery({ dedupe: memoryDedupeStore() }),
    'redis store': await perDelivery({ dedupe: redisDedupeStore({ redis, prefix: `${PREFIX}:dedupe:` }) }),
    'bullmq hand-off': await perDelivery({ handoff: bullmqHandoff({ queue }) }),
  };
  const base = results['memory store'];
  for (const [name, r] of Object.entries(results)) {
    console.log(
      `${name.padEnd(16)} ${r.sequential.toFixed(0).padStart(6)} | ${r.concurrent.toFixed(0).padStart(6)}` +
        `   over memory: +${(r.sequential - base.sequential).toFixed(0)} | +${(r.concurrent - base.concurrent).toFixed(0)}`,
    );
  }
  const e2e = await endToEnd(redis);
  console.log(
    `end to end, ${N} deliveries over HTTP, 2 receivers + 2 workers (BullMQ): ` +
      `${e2e.answeredPerSecond.toFixed(0)} answered/s, ${e2e.handledPerSecond.toFixed(0)} handled/s`,
  );
} finally {
  await queue.close();
  let cursor = '0';
  do {
    const [next, keys] = await redis.scan(cursor, 'MATCH', `${PREFIX}*`, 'COUNT', 1000);
    cursor = next;
    if (keys.length > 0) await redis.del(...keys);
  } while (cursor !== '0');
  redis.disconnect();
}
