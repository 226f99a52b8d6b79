/**
 * One instance of an app that runs several behind a load balancer: every instance shares one
 * dedupe store, so a delivery retried to another instance, sent twice, or sent to two webhooks
 * during a rotation runs its handlers once.
 *
 *   WEBHOOK_SECRET=whsec_… REDIS_URL=redis://127.0.0.1:6379 npx tsx examples/many-instances/server.ts
 *   WEBHOOK_SECRET=whsec_… DATABASE_URL=postgres://postgres@127.0.0.1:5432/test npx tsx examples/many-instances/server.ts
 *
 * Start it twice (PORT=3000 and PORT=3001) and send one delivery to both: one runs the handler.
 */
import { once } from 'node:events';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { pathToFileURL } from 'node:url';
import { Redis } from 'ioredis';
import pg from 'pg';
import { createReceiver, type DedupeStore } from 'jobhook';
import { nodeHandler } from 'jobhook/node';
import { redisDedupeStore } from 'jobhook/redis';
import { postgresDedupeStore } from 'jobhook/postgres';

export interface ManyInstancesOptions {
  port?: number;
  secret: string;
  /** Where the instances dedupe: one Redis or one PostgreSQL database for all of them. */
  store: { redisUrl: string; prefix?: string } | { databaseUrl: string; table?: string };
  log?: (line: string) => void;
}

export async function start({ port = 3000, secret, store, log = console.log }: ManyInstancesOptions) {
  let dedupe: DedupeStore;
  let disconnect: () => Promise<unknown>;
  if ('redisUrl' in store) {
    const redis = new Redis(store.redisUrl);
    dedupe = redisDedupeStore({ redis, prefix: store.prefix });
    disconnect = () => redis.quit();
  } else {
    const pool = new pg.Pool({ connectionString: store.databaseUrl });
    dedupe = postgresDedupeStore({ pool, table: store.table });
    disconnect = () => pool.end();
  }

  const receiver = createReceiver({ secret, dedupe })
    .onJobCompleted((event) => log(`job ${event.data.task_id} completed: ${event.data.image_url}`))
    .onJobFailed((event) => log(`job ${event.data.task_id} failed: ${event.data.error.message}`));

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
  const store = REDIS_URL ? { redisUrl: REDIS_URL } : { databaseUrl: DATABASE_URL! };
  const app = await start({ port: Number(process.env.PORT ?? 3000), secret, store });
  console.log(`Receiving webhooks at ${app.url}`);
  process.once('SIGTERM', () => void app.close());
}
