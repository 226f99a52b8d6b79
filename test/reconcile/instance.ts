// One receiver process of the reconcile instances test: `node --import tsx instance.ts`,
// configured by its environment (see variants.ts), listening on PORT, printing "listening" once
// it does. It dedupes in the shared store and reconciles from the shared tracker; its handler's
// side effect is one record per handled outcome (task id, this pid, the source) in the shared
// service (on SQLite, a file per process beside the database), and each status poll it makes is
// recorded with its start and end, so the test can tell that no task was polled by two instances
// at once. `POST /submit` submits a job as the app would, through a client of its own that tracks
// the task in the shared tracker, and answers its task id.
import { once } from 'node:events';
import { appendFile } from 'node:fs/promises';
import { join } from 'node:path';
import { createServer } from 'node:http';
import { createReceiver } from 'jobhook';
import type { DedupeStore, JobTracker } from 'jobhook/extend';
import { createClient } from 'jobhook/client';
import { nodeHandler } from 'jobhook/node';
import { redisDedupeStore, redisJobTracker } from 'jobhook/redis';
import { postgresDedupeStore, postgresJobTracker } from 'jobhook/postgres';
import { sqliteDedupeStore, sqliteJobTracker } from 'jobhook/sqlite';

const env = (name: string) => {
  const value = process.env[name];
  if (value === undefined) throw new Error(`instance.ts needs ${name}`);
  return value;
};

type Record = (table: 'effects' | 'polls', fields: string[]) => Promise<unknown>;

async function wiring(): Promise<{ dedupe: DedupeStore; jobs: JobTracker; record: Record }> {
  const leaseMs = Number(env('LEASE_MS'));
  if (env('VARIANT') === 'sqlite') {
    // Each process appends to files of its own, so that no write of the record races another's.
    const path = env('DB_PATH');
    const records = env('RECORDS');
    return {
      dedupe: sqliteDedupeStore({ path, leaseMs }),
      jobs: sqliteJobTracker({ path, leaseMs }),
      record: (table, fields) => appendFile(join(records, `${table}-${pid}.txt`), `${fields.join(' ')}\n`),
    };
  }
  if (env('VARIANT') === 'redis') {
    const { Redis } = await import('ioredis');
    const redis = new Redis(env('REDIS_URL'));
    const prefix = env('PREFIX');
    return {
      dedupe: redisDedupeStore({ redis, prefix: `${prefix}dedupe:`, leaseMs }),
      jobs: redisJobTracker({ redis, prefix: `${prefix}jobs:`, leaseMs }),
      record: (table, fields) => redis.rpush(`${prefix}${table}`, fields.join(' ')),
    };
  }
  const { default: pg } = await import('pg');
  const pool = new pg.Pool({ connectionString: env('DATABASE_URL'), max: 8 });
  const schema = env('SCHEMA');
  return {
    dedupe: postgresDedupeStore({ pool, table: `${schema}.deliveries`, leaseMs }),
    jobs: postgresJobTracker({ pool, table: `${schema}.jobs`, leaseMs }),
    record: (table, fields) =>
      pool.query(`INSERT INTO "${schema}".records (kind, line) VALUES ($1, $2)`, [table, fields.join(' ')]),
  };
}

const pid = String(process.pid);
const { dedupe, jobs, record } = await wiring();
// Each status poll, recorded once it ended: task id, pid, start and end (ms).
const recordingFetch: typeof fetch = async (input, init) => {
  const started = Date.now();
  try {
    return await fetch(input, init);
  } finally {
    const path = new URL(String(input instanceof Request ? input.url : input)).pathname;
    const task = /^\/api\/v1\/images\/(task_\w+)$/.exec(path)?.[1];
    if (task) await record('polls', [task, pid, String(started), String(Date.now())]);
  }
};
const client = createClient({ baseUrl: env('BASE_URL'), apiKey: env('API_KEY'), fetch: recordingFetch });
const receiver = createReceiver({
  secret: env('SECRET'),
  dedupe,
  reconcile: {
    client,
    jobs,
    afterMs: Number(env('AFTER_MS')),
    intervalMs: Number(env('INTERVAL_MS')),
    maxPollsPerPass: 40,
    concurrency: 4,
  },
});
const handle = async (event: { data: { task_id: string } }, context: { source: string }) => {
  await record('effects', [event.data.task_id, pid, context.source]);
};
receiver.onJobCompleted(handle).onJobFailed(handle);
// The app's own submissions: tracked, as createClient({ jobs }) tracks them, in the reconciler's tracker.
const submitter = createClient({ baseUrl: env('BASE_URL'), apiKey: env('API_KEY'), jobs });
const webhooks = nodeHandler(receiver, { path: '/webhooks' });
const server = createServer((request, response) => {
  if (request.method !== 'POST' || request.url !== '/submit') return void webhooks(request, response);
  submitter.images.generate({ model: 'm', prompt: `job of ${pid}` }).then(
    ({ task_id }) =>
      response.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ task_id })),
    (error: unknown) => response.writeHead(502).end(String(error)),
  );
});
server.listen(Number(env('PORT')), '127.0.0.1');
await once(server, 'listening');
console.log('listening');
process.once('SIGTERM', () => {
  server.close();
  void receiver.close().then(() => process.exit(0));
});
