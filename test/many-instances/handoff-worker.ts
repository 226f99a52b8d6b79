// One worker process of the pg-boss and NATS hand-off variants: the same app as the receivers
// (app.ts), run by `handoff.work()` of a pg-boss or NATS hand-off on the queue they fill. Its side effect is
// a member `<pid>:<n>` of a Redis set per event (on the shared Redis, which nobody disrupts), one
// per run of the handler. Prints "ready" once its worker is connected.
import { Redis } from 'ioredis';
import { app } from './app.js';

const env = (name: string) => {
  const value = process.env[name];
  if (value === undefined) throw new Error(`handoff-worker.ts needs ${name}`);
  return value;
};

const redis = new Redis(env('REDIS_URL'));
redis.on('error', () => undefined);
const prefix = env('PREFIX');
let runs = 0;
const receiver = app({}, (eventId) => redis.sadd(`${prefix}effects:${eventId}`, `${process.pid}:${++runs}`));

if (env('VARIANT') === 'pg-boss') {
  const { pgBossHandoff } = await import('jobhook/pg-boss');
  const { startBoss } = await import('./start-boss.js');
  const boss = await startBoss({
    connectionString: env('DATABASE_URL'),
    schema: env('SCHEMA'),
    application_name: env('APP_NAME'),
    supervise: false,
    schedule: false,
    max: 8,
  });
  // The worker's own errors (an outcome not stored before its job expired) go to stderr.
  await pgBossHandoff({ boss }).work(receiver, { concurrency: 16, pollingIntervalSeconds: 0.5 });
} else {
  const { connect } = await import('@nats-io/transport-node');
  const { jetstream } = await import('@nats-io/jetstream');
  const { natsHandoff } = await import('jobhook/nats');
  // Restarted while the broker is down: wait for it rather than exit.
  const nc = await connect({
    servers: env('NATS_URL'),
    maxReconnectAttempts: -1,
    reconnectTimeWait: 250,
    waitOnFirstConnect: true,
  });
  const handoff = natsHandoff({ js: jetstream(nc), stream: env('STREAM'), subject: env('SUBJECT') });
  await handoff.work(receiver, {
    concurrency: 16,
    ackWaitMs: 2000,
    backoffMs: [100, 200, 400, 800],
    onWorkerError: () => undefined,
  });
}
console.log('ready');
