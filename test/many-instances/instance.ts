// One receiver process of the many-instances test: `node --import tsx instance.ts`, configured by
// its environment (see variants.ts), listening on PORT, printing "listening" once it does. Its
// handler's side effect is one record per handled event, with this process's pid, in the shared
// service, so the test can count how often each event was handled and by which process.
import { once } from 'node:events';
import { createServer } from 'node:http';
import { setTimeout as sleep } from 'node:timers/promises';
import { createReceiver, type DedupeStore } from 'jobhook';
import { nodeHandler } from 'jobhook/node';
import { redisDedupeStore } from 'jobhook/redis';
import { postgresDedupeStore } from 'jobhook/postgres';

const env = (name: string) => {
  const value = process.env[name];
  if (value === undefined) throw new Error(`instance.ts needs ${name}`);
  return value;
};

type Effect = (eventId: string) => Promise<unknown>;

async function wiring(): Promise<{ store: DedupeStore; effect: Effect }> {
  const leaseMs = Number(env('LEASE_MS'));
  switch (env('VARIANT')) {
    case 'redis': {
      const { Redis } = await import('ioredis');
      const redis = new Redis(env('REDIS_URL'));
      const prefix = env('PREFIX');
      return {
        store: redisDedupeStore({ redis, prefix: `${prefix}dedupe:`, leaseMs }),
        effect: (eventId) => redis.rpush(`${prefix}effects:${eventId}`, String(process.pid)),
      };
    }
    case 'postgres': {
      const { default: pg } = await import('pg');
      const pool = new pg.Pool({ connectionString: env('DATABASE_URL'), max: 8 });
      const schema = env('SCHEMA');
      return {
        store: postgresDedupeStore({ pool, table: `${schema}.deliveries`, leaseMs }),
        effect: (eventId) =>
          pool.query(`INSERT INTO "${schema}".effects (event_id, pid) VALUES ($1, $2)`, [
            eventId,
            process.pid,
          ]),
      };
    }
    default:
      throw new Error(`unknown VARIANT ${process.env.VARIANT}`);
  }
}

const { store, effect } = await wiring();
const handle = async (event: { id: string }) => {
  // Work that takes a while, so that a SIGKILL finds handlers in the middle of it.
  await sleep(Math.random() * 10);
  await effect(event.id);
};
const receiver = createReceiver({ secret: JSON.parse(env('SECRETS')) as string[], dedupe: store })
  .onJobCompleted(handle)
  .onJobFailed(handle);

const server = createServer(nodeHandler(receiver, { path: '/webhooks' }));
server.listen(Number(env('PORT')), '127.0.0.1');
await once(server, 'listening');
console.log('listening');
process.once('SIGTERM', () => {
  server.close();
  process.exit(0);
});
