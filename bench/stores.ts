/**
 * The shared dedupe stores: time per delivery of `receiver.receive` (verify, parse, validate,
 * claim, handler, complete; no HTTP) with the Redis and Postgres stores against the in-memory one,
 * one delivery at a time (latency) and 32 in flight (throughput), interleaved round by round; and
 * the round trips each store makes per delivery, counted at the client. Needs Redis and
 * PostgreSQL at JOBHOOK_REDIS_URL / JOBHOOK_DATABASE_URL (the test defaults); a service that does
 * not answer is skipped with one line. Uses a key prefix and a schema of its own and removes them.
 */
import { randomBytes } from 'node:crypto';
import { Redis } from 'ioredis';
import pg from 'pg';
import { jobCompletedBody, standardHeaders, SECRET, withFreshEventId } from './fixtures.js';
import { median } from './measure.js';
import {
  createReceiver,
  memoryDedupeStore,
  postgresDedupeStore,
  redisDedupeStore,
  type DedupeStore,
} from './jobhook.js';

export const REDIS_URL = process.env.JOBHOOK_REDIS_URL || 'redis://127.0.0.1:6379';
export const DATABASE_URL = process.env.JOBHOOK_DATABASE_URL || 'postgres://postgres@127.0.0.1:5432/test';

export const STORE_NAMES = ['memory', 'redis', 'postgres'] as const;
export type StoreName = (typeof STORE_NAMES)[number];

export interface StoreOptions {
  rounds: number;
  /** Deliveries per store, mode and round. */
  deliveries: number;
  /** Deliveries in flight in the throughput mode. */
  concurrency: number;
}

export interface StoreSamples {
  /** µs per delivery, one at a time, one entry per round. */
  sequential: number[];
  /** µs per delivery with `concurrency` in flight. */
  concurrent: number[];
  /** CPU time of this process per delivery (µs) with `concurrency` in flight. */
  cpu: number[];
  /** Calls the store made to its service, per delivery (each one round trip). */
  roundTrips: number;
}

export interface StoreResults {
  options: StoreOptions;
  samples: Partial<Record<StoreName, StoreSamples>>;
  /** One line per service that was not there. */
  skipped: string[];
}

/**
 * Counts the calls a client receives to the named methods (each is one round trip to the service)
 * and forwards everything, so the store and the receiver use the client as they would.
 */
function counting<T extends object>(
  client: T,
  methods: readonly string[],
): { client: T; calls: () => number } {
  let calls = 0;
  const proxy = new Proxy(client, {
    get(target, property) {
      const value: unknown = Reflect.get(target, property, target);
      if (typeof value !== 'function') return value;
      const method = value as (...args: unknown[]) => unknown;
      if (typeof property === 'string' && methods.includes(property)) {
        return (...args: unknown[]) => {
          calls++;
          return method.apply(target, args);
        };
      }
      return method.bind(target);
    },
  });
  return { client: proxy, calls: () => calls };
}

/** Runs `check`; if it throws, adds a line saying `what` is not running and returns false. */
export async function probe(
  what: string,
  check: () => Promise<unknown>,
  skipped: string[],
): Promise<boolean> {
  try {
    await check();
    return true;
  } catch (error) {
    skipped.push(`${what}: not running (${error instanceof Error ? error.message : String(error)}), skipped`);
    return false;
  }
}

/** Deletes the keys that start with `prefix` (this run's own), and no others. */
export async function deleteKeys(redis: Redis, prefix: string): Promise<void> {
  let cursor = '0';
  do {
    const [nextCursor, keys] = await redis.scan(cursor, 'MATCH', `${prefix}*`, 'COUNT', 1000);
    cursor = nextCursor;
    if (keys.length > 0) await redis.del(...keys);
  } while (cursor !== '0');
}

interface Subject {
  name: StoreName;
  receiver: ReturnType<typeof makeReceiver>;
  calls: () => number;
}

function makeReceiver(dedupe: DedupeStore) {
  return createReceiver({ secret: SECRET, dedupe }).onJobCompleted(() => undefined);
}

const body = jobCompletedBody(1024);
/** Fresh event and task ids each: the payload's id is the dedupe key, and a task has one outcome. */
function deliveries(n: number) {
  return Array.from({ length: n }, () => {
    const bytes = withFreshEventId(body);
    return { headers: standardHeaders(bytes), body: bytes };
  });
}

/** Runs `batch` with `inFlight` workers; µs per delivery (wall) and µs of CPU per delivery. */
async function run(subject: Subject, batch: ReturnType<typeof deliveries>, inFlight: number) {
  let next = 0;
  const cpuBefore = process.cpuUsage();
  const started = process.hrtime.bigint();
  await Promise.all(
    Array.from({ length: inFlight }, async () => {
      while (next < batch.length) {
        const answer = await subject.receiver.receive(batch[next++]!);
        if (answer.status !== 200)
          throw new Error(`${subject.name}: answered ${answer.status} ${answer.body}`);
      }
    }),
  );
  const wall = Number(process.hrtime.bigint() - started) / 1000 / batch.length;
  const cpu = process.cpuUsage(cpuBefore);
  return { wall, cpu: (cpu.user + cpu.system) / batch.length };
}

export async function runStores(options: StoreOptions): Promise<StoreResults> {
  const skipped: string[] = [];
  const subjects: Subject[] = [
    { name: 'memory', receiver: makeReceiver(memoryDedupeStore()), calls: () => 0 },
  ];
  const cleanups: (() => Promise<unknown>)[] = [];

  const redis = new Redis(REDIS_URL, { lazyConnect: true, maxRetriesPerRequest: 1, connectTimeout: 2000 });
  redis.on('error', () => undefined);
  if (await probe(`Redis at ${REDIS_URL}`, () => redis.connect().then(() => redis.ping()), skipped)) {
    const prefix = `jobhook-bench:${randomBytes(6).toString('hex')}:`;
    // PUBLISH counts too: with an ioredis client the receiver shares each job result over pub/sub.
    const counted = counting(redis, ['evalsha', 'eval', 'publish']);
    subjects.push({
      name: 'redis',
      receiver: makeReceiver(redisDedupeStore({ redis: counted.client, prefix })),
      calls: counted.calls,
    });
    cleanups.push(() => deleteKeys(redis, prefix));
  }
  cleanups.push(async () => redis.disconnect());

  const pool = new pg.Pool({
    connectionString: DATABASE_URL,
    max: options.concurrency,
    connectionTimeoutMillis: 2000,
  });
  pool.on('error', () => undefined);
  const schema = `jobhook_bench_${randomBytes(4).toString('hex')}`;
  if (await probe(`PostgreSQL at ${DATABASE_URL}`, () => pool.query(`CREATE SCHEMA "${schema}"`), skipped)) {
    const counted = counting(pool, ['query']);
    subjects.push({
      name: 'postgres',
      receiver: makeReceiver(postgresDedupeStore({ pool: counted.client, table: `${schema}.deliveries` })),
      calls: counted.calls,
    });
    cleanups.push(() => pool.query(`DROP SCHEMA "${schema}" CASCADE`));
  }
  cleanups.push(() => pool.end());

  const samples: StoreResults['samples'] = {};
  try {
    for (const subject of subjects) {
      samples[subject.name] = { sequential: [], concurrent: [], cpu: [], roundTrips: 0 };
      await run(subject, deliveries(200), 1); // warm-up; the Postgres table is created here
      await run(subject, deliveries(200), options.concurrency);
    }
    let counted = 0;
    const callsBefore = new Map(subjects.map((s) => [s, s.calls()]));
    for (let round = 0; round < options.rounds; round++) {
      for (let k = 0; k < subjects.length; k++) {
        const subject = subjects[(round + k) % subjects.length]!;
        const s = samples[subject.name]!;
        s.sequential.push((await run(subject, deliveries(options.deliveries), 1)).wall);
        const concurrent = await run(subject, deliveries(options.deliveries), options.concurrency);
        s.concurrent.push(concurrent.wall);
        s.cpu.push(concurrent.cpu);
      }
      counted += 2 * options.deliveries;
    }
    for (const subject of subjects) {
      samples[subject.name]!.roundTrips = (subject.calls() - callsBefore.get(subject)!) / counted;
    }
  } finally {
    // The Redis store's receiver shares job results over a subscription of its own until closed;
    // left open, it kept the bench process alive after the last line.
    for (const subject of subjects) await subject.receiver.close().catch(() => undefined);
    for (const cleanup of cleanups) await cleanup().catch(() => undefined);
  }
  return { options, samples, skipped };
}

/** Median over rounds of `name`'s figure minus the in-memory store's, each within one round. */
export function overMemory(
  results: StoreResults,
  name: StoreName,
  field: 'sequential' | 'concurrent',
): number {
  const x = results.samples[name]![field];
  const base = results.samples.memory![field];
  return median(x.map((value, i) => value - base[i]!));
}
