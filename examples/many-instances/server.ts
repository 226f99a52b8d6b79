/**
 * One instance of an app that runs several behind a load balancer: every instance shares one
 * dedupe store, so a delivery retried to another instance, sent twice, or sent to two webhooks
 * during a rotation runs its handlers once.
 *
 *   WEBHOOK_SECRET=whsec_… REDIS_URL=redis://127.0.0.1:6379 npx tsx examples/many-instances/server.ts
 *   WEBHOOK_SECRET=whsec_… DATABASE_URL=postgres://postgres@127.0.0.1:5432/test npx tsx examples/many-instances/server.ts
 *
 * Start it twice (PORT=3000 and PORT=3001) and send one delivery to both: one runs the handler.
 *
 * With BULLMQ=1 (and REDIS_URL) it hands each event off to a BullMQ queue instead and answers
 * once the event is queued; the handlers run in `worker.ts`, next to it:
 *
 *   WEBHOOK_SECRET=whsec_… REDIS_URL=redis://127.0.0.1:6379 BULLMQ=1 npx tsx examples/many-instances/server.ts
 *   WEBHOOK_SECRET=whsec_… REDIS_URL=redis://127.0.0.1:6379 npx tsx examples/many-instances/worker.ts
 */
import { once } from 'node:events';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { pathToFileURL } from 'node:url';
import { Queue } from 'bullmq';
import { Redis } from 'ioredis';
import pg from 'pg';
import { createReceiver, type ReceiverOptions } from 'jobhook';
import { bullmqHandoff } from 'jobhook/bullmq';
import { nodeHandler } from 'jobhook/node';
import { redisDedupeStore } from 'jobhook/redis';
import { postgresDedupeStore } from 'jobhook/postgres';

/** A BullMQ queue on one Redis: receivers add to it, workers (worker.ts) take from it. */
export interface QueueSettings {
  redisUrl: string;
  /** Default `jobhook`. */
  name?: string;
  /** BullMQ's key prefix. Default `bull`. */
  prefix?: string;
}

export interface ManyInstancesOptions {
  port?: number;
  secret: string;
  /**
   * Where the instances dedupe (one Redis or one PostgreSQL database for all of them), or the
   * queue they hand events off to.
   */
  store:
    | { redisUrl: string; prefix?: string }
    | { databaseUrl: string; table?: string }
    | { queue: QueueSettings };
  log?: (line: string) => void;
}

/**
 * The app's receiver with its handlers: the same in the web processes and in the workers, so
 * that whichever runs them, the handlers are the same.
 */
export function appReceiver(
  secret: string,
  options: Omit<ReceiverOptions, 'secret'>,
  log: (line: string) => void,
) {
  return createReceiver({ ...options, secret })
    .onJobCompleted((event) => log(`job ${event.data.task_id} completed: ${event.data.image_url}`))
    .onJobFailed((event) => log(`job ${event.data.task_id} failed: ${event.data.error.message}`));
}

export async function start({ port = 3000, secret, store, log = console.log }: ManyInstancesOptions) {
  let options: Omit<ReceiverOptions, 'secret'>;
  let disconnect: () => Promise<unknown>;
  if ('queue' in store) {
    const { redisUrl, name = 'jobhook', prefix } = store.queue;
    const queue = new Queue(name, { connection: { url: redisUrl }, ...(prefix && { prefix }) });
    options = { handoff: bullmqHandoff({ queue }) };
    disconnect = () => queue.close();
  } else if ('redisUrl' in store) {
    const redis = new Redis(store.redisUrl);
    options = { dedupe: redisDedupeStore({ redis, prefix: store.prefix }) };
    disconnect = () => redis.quit();
  } else {
    const pool = new pg.Pool({ connectionString: store.databaseUrl });
    options = { dedupe: postgresDedupeStore({ pool, table: store.table }) };
    disconnect = () => pool.end();
  }

  const receiver = appReceiver(secret, options, log);

  const server = createServer(nodeHandler(receiver, { path: '/webhooks' }));
  server.listen(port, '127.0.0.1');
  await once(server, 'listening');
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/webhooks`;
  return {
    url,
    async close() {
      await receiver.close();
      await new Promise((resolve) => server.close(resolve));
      await disconnect();
    },
  };
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const secret = process.env.WEBHOOK_SECRET;
  const { REDIS_URL, DATABASE_URL } = process.env;
  if (!secret || (!REDIS_URL && !DATABASE_URL)) {
    console.error('Set WEBHOOK_SECRET, and REDIS_URL or DATABASE_URL.');
    process.exit(1);
  }
  const store = REDIS_URL
    ? process.env.BULLMQ
      ? { queue: { redisUrl: REDIS_URL } }
      : { redisUrl: REDIS_URL }
    : { databaseUrl: DATABASE_URL! };
  const app = await start({ port: Number(process.env.PORT ?? 3000), secret, store });
  console.log(`Receiving webhooks at ${app.url}`);
  process.once('SIGTERM', () => void app.close());
}
