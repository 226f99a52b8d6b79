// What differs between runs of the many-instances test: where the instances dedupe and where
// their side effects are counted. A variant prepares a run of its own (a key prefix, a schema),
// gives the instances their environment, reads the effects back and removes what it created.
// The hand-off variant (BullMQ) adds worker processes, restarts its Redis mid-run, and drains the
// queue before the effects are counted.
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { Queue } from 'bullmq';
import { Redis } from 'ioredis';
import {
  redisForTest,
  postgresForTest,
  runTag,
  startPrivateRedis,
  REDIS_URL,
  DATABASE_URL,
} from '../support/services.js';

export interface PreparedVariant {
  /** Environment of every receiver process (besides PORT, SECRETS, LEASE_MS). */
  env: Record<string, string>;
  /**
   * Processes to run besides the receivers (the hand-off's workers): a script and how many; with
   * `kill`, one is killed with SIGKILL mid-run and started again.
   */
  workers?: { script: string; count: number; kill?: boolean };
  /** Breaks and mends something mid-run (the hand-off restarts Redis); submission goes on. */
  disrupt?(log: (line: string) => void): Promise<void>;
  /**
   * Resolves once every side effect the deliveries caused is in (the workers emptied the queue),
   * with facts for the result (jobs left failed, ...).
   */
  drain?(log: (line: string) => void): Promise<Record<string, number>>;
  /** For each event id, the pids of the processes that performed its side effect, in order. */
  effects(): Promise<Map<string, string[]>>;
  cleanup(): Promise<void>;
}

export interface Variant {
  name: string;
  prepare(): Promise<PreparedVariant>;
}

/** Reads `<prefix>effects:<event id>` keys: lists of pids, or sets of `<pid>:<n>` members. */
export async function redisEffects(redis: Redis, prefix: string, kind: 'list' | 'set') {
  const effects = new Map<string, string[]>();
  const keys: string[] = [];
  let cursor = '0';
  do {
    const [next, found] = await redis.scan(cursor, 'MATCH', `${prefix}effects:*`, 'COUNT', 1000);
    cursor = next;
    keys.push(...found);
  } while (cursor !== '0');
  const pipeline = redis.pipeline();
  for (const key of keys) {
    if (kind === 'list') pipeline.lrange(key, 0, -1);
    else pipeline.smembers(key);
  }
  const values = (await pipeline.exec()) ?? [];
  keys.forEach((key, i) => {
    const members = values[i]![1] as string[];
    effects.set(
      key.slice(`${prefix}effects:`.length),
      kind === 'list' ? members : members.map((member) => member.split(':')[0]!),
    );
  });
  return effects;
}

export const redisVariant: Variant = {
  name: 'redis',
  async prepare() {
    const service = redisForTest();
    return {
      env: { VARIANT: 'redis', REDIS_URL, PREFIX: service.prefix },
      effects: () => redisEffects(service.redis, service.prefix, 'list'),
      cleanup: () => service.cleanup(),
    };
  },
};

/**
 * The BullMQ hand-off on a Redis of the test's own, durable (append-only file, fsynced on every
 * write), killed with SIGKILL and started again mid-run: receivers queue, 2 workers run the
 * handlers, and the effects are counted in that Redis.
 */
export const bullmqVariant: Variant = {
  name: 'bullmq',
  async prepare() {
    const server = await startPrivateRedis({ durable: true });
    const redis = new Redis(server.url, { maxRetriesPerRequest: null });
    redis.on('error', () => undefined);
    const queueName = `jobhook-${runTag()}`;
    const prefix = `jobhook-test:${queueName}:`;
    const queue = new Queue(queueName, { connection: { url: server.url } });
    queue.on('error', () => undefined);
    return {
      env: { VARIANT: 'bullmq', REDIS_URL: server.url, QUEUE: queueName, PREFIX: prefix },
      workers: { script: './worker.ts', count: 2 },
      async disrupt(log) {
        await server.kill();
        log('redis killed (SIGKILL)');
        await sleep(500);
        await server.start();
        log('redis restarted from its append-only file');
      },
      async drain(log) {
        // Settled deliveries are all in the queue; wait until the workers have run every job
        // (retries included), twice in a row, so that a job between two states is not missed.
        let empty = 0;
        for (;;) {
          const counts = await queue.getJobCounts('waiting', 'active', 'delayed', 'prioritized', 'failed');
          const left = counts.waiting! + counts.active! + counts.delayed! + counts.prioritized!;
          if (left === 0 && ++empty === 2) {
            const completed = await queue.getJobCountByTypes('completed');
            log(`queue drained: ${completed} completed jobs kept, ${counts.failed} failed`);
            return { failedJobs: counts.failed! };
          }
          if (left > 0) empty = 0;
          await sleep(250);
        }
      },
      effects: () => redisEffects(redis, prefix, 'set'),
      async cleanup() {
        await queue.close();
        redis.disconnect();
        await server.stop();
      },
    };
  },
};

/** One SQLite file on this machine, shared by the processes; each records its effects in a file of its own. */
export const sqliteVariant: Variant = {
  name: 'sqlite',
  async prepare() {
    const dir = mkdtempSync(join(tmpdir(), 'jobhook-many-sqlite-'));
    return {
      env: { VARIANT: 'sqlite', DB_PATH: join(dir, 'jobhook.db'), RECORDS: dir },
      async effects() {
        const runs = new Map<string, { pid: string; at: number }[]>();
        for (const name of readdirSync(dir).filter((file) => file.startsWith('effects-'))) {
          for (const line of readFileSync(join(dir, name), 'utf8').split('\n').filter(Boolean)) {
            const [eventId, pid, at] = line.split(' ') as [string, string, string];
            runs.set(eventId, [...(runs.get(eventId) ?? []), { pid, at: Number(at) }]);
          }
        }
        const inOrder = (list: { pid: string; at: number }[]) =>
          list.sort((a, b) => a.at - b.at).map((run) => run.pid);
        return new Map([...runs].map(([eventId, list]) => [eventId, inOrder(list)]));
      },
      cleanup: async () => rmSync(dir, { recursive: true, force: true }),
    };
  },
};

export const postgresVariant: Variant = {
  name: 'postgres',
  async prepare() {
    const service = await postgresForTest();
    await service.pool.query(
      `CREATE TABLE "${service.schema}".effects (n bigserial PRIMARY KEY, event_id text NOT NULL, pid text NOT NULL)`,
    );
    return {
      env: { VARIANT: 'postgres', DATABASE_URL, SCHEMA: service.schema },
      async effects() {
        const { rows } = await service.pool.query<{ event_id: string; pids: string[] }>(
          `SELECT event_id, array_agg(pid ORDER BY n) AS pids FROM "${service.schema}".effects GROUP BY event_id`,
        );
        return new Map(rows.map((row) => [row.event_id, row.pids]));
      },
      cleanup: () => service.cleanup(),
    };
  },
};
