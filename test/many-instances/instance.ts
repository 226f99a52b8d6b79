// One receiver process of the many-instances test: `node --import tsx instance.ts`, configured by
// its environment (see variants.ts), listening on PORT, printing "listening" once it does. With a
// store, its handler's side effect is one record per handled event, with this process's pid, in
// the shared service, so the test can count how often each event was handled and by which
// process. With the hand-off it only queues: worker.ts runs the handlers.
import { once } from 'node:events';
import { createServer } from 'node:http';
import type { ReceiverOptions } from 'jobhook';
import { nodeHandler } from 'jobhook/node';
import { redisDedupeStore } from 'jobhook/redis';
import { postgresDedupeStore } from 'jobhook/postgres';
import { bullmqHandoff } from 'jobhook/bullmq';
import { app, type Effect } from './app.js';
import { startBoss } from './start-boss.js';

const env = (name: string) => {
  const value = process.env[name];
  if (value === undefined) throw new Error(`instance.ts needs ${name}`);
  return value;
};

async function wiring(): Promise<{ options: Omit<ReceiverOptions, 'secret'>; effect: Effect }> {
  const leaseMs = Number(env('LEASE_MS'));
  switch (env('VARIANT')) {
    case 'sqlite': {
      const { sqliteDedupeStore } = await import('jobhook/sqlite');
      const { appendFile } = await import('node:fs/promises');
      // A file per process, so that no two processes append to one file; the time orders the runs.
      const records = `${env('RECORDS')}/effects-${process.pid}.txt`;
      return {
        // A process waiting on another's write lock waits synchronously (up to the 5 s busy timeout),
        // and its lease renewals with it: a lease shorter than that lapses under load (docs/sqlite.md).
        options: { dedupe: sqliteDedupeStore({ path: env('DB_PATH'), leaseMs: Math.max(leaseMs, 6000) }) },
        effect: (eventId) => appendFile(records, `${eventId} ${process.pid} ${Date.now()}\n`),
      };
    }
    case 'redis': {
      const { Redis } = await import('ioredis');
      const redis = new Redis(env('REDIS_URL'));
      const prefix = env('PREFIX');
      return {
        options: { dedupe: redisDedupeStore({ redis, prefix: `${prefix}dedupe:`, leaseMs }) },
        effect: (eventId) => redis.rpush(`${prefix}effects:${eventId}`, String(process.pid)),
      };
    }
    case 'postgres': {
      const { default: pg } = await import('pg');
      const pool = new pg.Pool({ connectionString: env('DATABASE_URL'), max: 8 });
      const schema = env('SCHEMA');
      return {
        options: { dedupe: postgresDedupeStore({ pool, table: `${schema}.deliveries`, leaseMs }) },
        effect: (eventId) =>
          pool.query(`INSERT INTO "${schema}".effects (event_id, pid) VALUES ($1, $2)`, [
            eventId,
            process.pid,
          ]),
      };
    }
    case 'bullmq': {
      const { Queue } = await import('bullmq');
      const queue = new Queue(env('QUEUE'), { connection: { url: env('REDIS_URL') } });
      queue.on('error', () => undefined); // a Redis restart: the hand-off's answer says it (503)
      return {
        options: { handoff: bullmqHandoff({ queue }) },
        effect: () => Promise.reject(new Error('a receiver with a hand-off runs no handler')),
      };
    }
    case 'pg-boss': {
      const { pgBossHandoff } = await import('jobhook/pg-boss');
      const schema = env('SCHEMA');
      // Connections cut mid-run: the hand-off's answer says it (503).
      const boss = await startBoss({
        connectionString: env('DATABASE_URL'),
        schema,
        application_name: env('APP_NAME'),
        supervise: false,
        schedule: false,
        max: 8,
      });
      // A job whose worker was killed comes back after 5 s rather than pg-boss's 15 minutes.
      const sendOptions = { expireInSeconds: 5, retryDelay: 1 };
      return {
        options: { handoff: pgBossHandoff({ boss, schema, sendOptions }) },
        effect: () => Promise.reject(new Error('a receiver with a hand-off runs no handler')),
      };
    }
    case 'nats': {
      const { connect } = await import('@nats-io/transport-node');
      const { jetstream } = await import('@nats-io/jetstream');
      const { natsHandoff } = await import('jobhook/nats');
      const nc = await connect({
        servers: env('NATS_URL'),
        maxReconnectAttempts: -1,
        reconnectTimeWait: 250,
        // Restarted while the broker is down: wait for it rather than exit.
        waitOnFirstConnect: true,
      });
      return {
        options: {
          handoff: natsHandoff({ js: jetstream(nc), stream: env('STREAM'), subject: env('SUBJECT') }),
        },
        effect: () => Promise.reject(new Error('a receiver with a hand-off runs no handler')),
      };
    }
    default:
      throw new Error(`unknown VARIANT ${process.env.VARIANT}`);
  }
}

const { options, effect } = await wiring();
const receiver = app(options, effect);
const server = createServer(nodeHandler(receiver, { path: '/webhooks' }));
server.listen(Number(env('PORT')), '127.0.0.1');
await once(server, 'listening');
console.log('listening');
process.once('SIGTERM', () => {
  server.close();
  process.exit(0);
});
