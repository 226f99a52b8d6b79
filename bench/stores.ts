/**
 * Time per delivery of the shared dedupe stores over the in-memory one, through `receiver.receive`
 * (verify, parse, validate, claim, handler, complete; no HTTP). Not part of `npm run bench` yet:
 *
 *   npx tsx bench/stores.ts            (BENCH_DELIVERIES=4000 for more)
 *
 * Needs Redis and PostgreSQL at JOBHOOK_REDIS_URL / JOBHOOK_DATABASE_URL (the test defaults); it
 * uses a key prefix and a schema of its own and removes them.
 */
import { randomBytes, randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';
import pg from 'pg';
import { createReceiver, memoryDedupeStore, type DedupeStore } from 'jobhook';
import { postgresDedupeStore } from 'jobhook/postgres';
import { redisDedupeStore } from 'jobhook/redis';
import { signDelivery } from 'jobhook/testing';

const REDIS_URL = process.env.JOBHOOK_REDIS_URL || 'redis://127.0.0.1:6379';
const DATABASE_URL = process.env.JOBHOOK_DATABASE_URL || 'postgres://postgres@127.0.0.1:5432/test';
const N = Number(process.env.BENCH_DELIVERIES) || 2000;
const SECRET = `whsec_${randomBytes(24).toString('base64')}`;

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

/** Mean µs per delivery, one at a time (latency) and 32 at a time (throughput). */
async function measure(store: DedupeStore) {
  const receiver = createReceiver({ secret: SECRET, dedupe: store }).onJobCompleted(() => undefined);
  const run = async (batch: ReturnType<typeof deliveries>, inFlight: number) => {
    let next = 0;
    const started = process.hrtime.bigint();
    await Promise.all(
      Array.from({ length: inFlight }, async () => {
        while (next < batch.length) {
          const d = batch[next++]!;
          const answer = await receiver.receive({ headers: d.headers, body: d.body });
          if (answer.status !== 200) throw new Error(`answered ${answer.status}`);
        }
      }),
    );
    return Number(process.hrtime.bigint() - started) / 1000 / batch.length;
  };
  await run(deliveries(200), 1); // warm-up
  return { sequential: await run(deliveries(N), 1), concurrent: await run(deliveries(N), 32) };
}

const redis = new Redis(REDIS_URL);
const prefix = `jobhook-bench:${randomUUID()}:`;
const pool = new pg.Pool({ connectionString: DATABASE_URL, max: 16 });
const schema = `jobhook_bench_${randomBytes(4).toString('hex')}`;
await pool.query(`CREATE SCHEMA "${schema}"`);
try {
  const results = {
    memory: await measure(memoryDedupeStore()),
    redis: await measure(redisDedupeStore({ redis, prefix })),
    postgres: await measure(postgresDedupeStore({ pool, table: `${schema}.deliveries` })),
  };
  const base = results.memory;
  console.log(`${N} deliveries each, µs per delivery (one at a time | 32 at a time), over memory:`);
  for (const [name, r] of Object.entries(results)) {
    console.log(
      `${name.padEnd(9)} ${r.sequential.toFixed(0).padStart(6)} | ${r.concurrent.toFixed(0).padStart(6)}` +
        `   +${(r.sequential - base.sequential).toFixed(0)} | +${(r.concurrent - base.concurrent).toFixed(0)}`,
    );
  }
} finally {
  let cursor = '0';
  do {
    const [nextCursor, keys] = await redis.scan(cursor, 'MATCH', `${prefix}*`, 'COUNT', 1000);
    cursor = nextCursor;
    if (keys.length > 0) await redis.del(...keys);
  } while (cursor !== '0');
  redis.disconnect();
  await pool.query(`DROP SCHEMA "${schema}" CASCADE`);
  await pool.end();
}
