/**
 * One process of the hand-off bench (bench/handoff.ts), forked with IPC from the compiled bench:
 * `handoff-process.js <role> <url> <prefix>`: the url is Redis's, PostgreSQL's (pg-boss roles) or
 * NATS's (nats roles); the prefix names this run's queue, schema or stream.
 *
 * - `handoff`: node:http + `nodeHandler` on a receiver that hands each event off to the BullMQ
 *   queue `<prefix>` (`bullmqHandoff`); it runs no handler.
 * - `inline`: node:http + `nodeHandler` on a receiver that runs the handler itself, deduplicating
 *   with `redisDedupeStore` (keys under `<prefix>:dedupe:`).
 * - `worker`: `runWorker` runs the handler for the queued events, 32 at a time.
 * - `pgboss` and `pgboss-worker`: the same with `pgBossHandoff` and its `work()` (pg-boss's
 *   tables in the schema `<prefix>`).
 * - `nats` and `nats-worker`: the same with `natsHandoff` and its `work()` (the stream
 *   `<prefix>`, the subject `<prefix>.events`).
 *
 * The handler counts its runs. The process reports `{ port }` (receivers) or `{}` (workers) once
 * ready, answers `'cpu'` with its CPU time so far (user + system, µs) and its handler runs, and
 * exits when the parent goes away.
 */
import { once } from 'node:events';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { jetstream } from '@nats-io/jetstream';
import { connect } from '@nats-io/transport-node';
import { Queue } from 'bullmq';
import { Redis } from 'ioredis';
import PgBoss from 'pg-boss';
import { SECRET } from './fixtures.js';
import {
  bullmqHandoff,
  createReceiver,
  natsHandoff,
  nodeHandler,
  pgBossHandoff,
  redisDedupeStore,
  runWorker,
} from './jobhook.js';

export const ROLES = [
  'handoff',
  'inline',
  'worker',
  'pgboss',
  'pgboss-worker',
  'nats',
  'nats-worker',
] as const;
export type Role = (typeof ROLES)[number];
export const PATH = '/webhooks';
/** The queue's name; the per-run prefix keeps it apart from any other queue of that name. */
export const QUEUE = 'jobhook';
/** Jobs each worker process runs at once. */
export const WORKER_CONCURRENCY = 32;

export interface Ready {
  port?: number;
}

export interface Usage {
  /** CPU time of the process so far (user + system), µs. */
  cpuUs: number;
  /** Handler runs so far. */
  handled: number;
}

let handled = 0;
const count = () => void handled++;

async function start(role: Role, url: string, prefix: string): Promise<Ready> {
  const connection = { url };
  const listen = async (receiver: Parameters<typeof nodeHandler>[0]) => {
    const server = createServer(nodeHandler(receiver, { path: PATH }));
    server.keepAliveTimeout = 60_000;
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    return { port: (server.address() as AddressInfo).port };
  };
  switch (role) {
    case 'handoff': {
      const queue = new Queue(QUEUE, { connection, prefix });
      queue.on('error', (error) => console.error(`bench: handoff receiver: ${error.message}`));
      await queue.waitUntilReady();
      return listen(createReceiver({ secret: SECRET, handoff: bullmqHandoff({ queue }) }));
    }
    case 'inline': {
      const redis = new Redis(url);
      const dedupe = redisDedupeStore({ redis, prefix: `${prefix}:dedupe:` });
      return listen(createReceiver({ secret: SECRET, dedupe }).onJobCompleted(count));
    }
    case 'worker': {
      await runWorker(createReceiver({ secret: SECRET }).onJobCompleted(count), {
        connection,
        queueName: QUEUE,
        concurrency: WORKER_CONCURRENCY,
        workerOptions: { prefix },
      });
      return {};
    }
    case 'pgboss':
    case 'pgboss-worker': {
      const boss = new PgBoss({
        connectionString: url,
        schema: prefix,
        supervise: role === 'pgboss-worker',
        max: 16,
      });
      boss.on('error', (error) => console.error(`bench: ${role}: ${error.message}`));
      await boss.start();
      const handoff = pgBossHandoff({ boss, schema: prefix });
      if (role === 'pgboss') return listen(createReceiver({ secret: SECRET, handoff }));
      // The hand-off's worker: it creates the queue when the receivers have not sent to it yet.
      await handoff.work(createReceiver({ secret: SECRET }).onJobCompleted(count), {
        concurrency: WORKER_CONCURRENCY,
        pollingIntervalSeconds: 0.5,
      });
      return {};
    }
    case 'nats':
    case 'nats-worker': {
      const js = jetstream(await connect({ servers: url }));
      const where = { js, stream: prefix, subject: `${prefix}.events` };
      if (role === 'nats') return listen(createReceiver({ secret: SECRET, handoff: natsHandoff(where) }));
      // The hand-off's worker: it creates the stream when the receivers have not published yet.
      await natsHandoff(where).work(createReceiver({ secret: SECRET }).onJobCompleted(count), {
        concurrency: WORKER_CONCURRENCY,
      });
      return {};
    }
  }
}

if (process.send) {
  const [role, url, prefix] = process.argv.slice(2) as [Role, string, string];
  if (!ROLES.includes(role) || !url || !prefix)
    throw new Error(`Bad arguments: ${process.argv.slice(2).join(' ')}`);
  process.on('message', (message) => {
    if (message === 'cpu') {
      const { user, system } = process.cpuUsage();
      process.send!({ cpuUs: user + system, handled } satisfies Usage);
    }
  });
  process.on('disconnect', () => process.exit(0));
  process.send((await start(role, url, prefix)) satisfies Ready);
}
