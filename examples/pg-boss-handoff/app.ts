/**
 * Verify, then enqueue, on PostgreSQL alone: the web process answers the gateway once the event is
 * a pg-boss job; workers run the handlers, with pg-boss's retries. One file, two roles:
 *
 *   WEBHOOK_SECRET=whsec_… DATABASE_URL=postgres://postgres@127.0.0.1:5432/test npx tsx examples/pg-boss-handoff/app.ts
 *   WEBHOOK_SECRET=whsec_… DATABASE_URL=postgres://postgres@127.0.0.1:5432/test npx tsx examples/pg-boss-handoff/app.ts worker
 *
 * Events whose handlers kept failing: `npx jobhook failed list --database-url "$DATABASE_URL"`,
 * then `npx jobhook failed retry <id>` (or `--all`).
 */
import { once } from 'node:events';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { pathToFileURL } from 'node:url';
import PgBoss from 'pg-boss';
import { createReceiver, type ReceiverOptions } from 'jobhook';
import { nodeHandler } from 'jobhook/node';
import { pgBossHandoff } from 'jobhook/pg-boss';

export interface PgBossAppOptions {
  databaseUrl: string;
  secret: string;
  /** pg-boss's schema. Default `pgboss`. */
  schema?: string;
  log?: (line: string) => void;
}

/** The receiver with its handlers: the same in the web process and in the workers. */
function appReceiver(secret: string, options: Omit<ReceiverOptions, 'secret'>, log: (line: string) => void) {
  return createReceiver({ ...options, secret })
    .onJobCompleted((event) => log(`job ${event.data.task_id} completed: ${event.data.image_url}`))
    .onJobFailed((event) => log(`job ${event.data.task_id} failed: ${event.data.error.message}`));
}

async function startBoss({ databaseUrl, schema = 'pgboss' }: PgBossAppOptions) {
  // Keep finished jobs 3 days in the job table (pg-boss's default is 12 hours) and failed ones a
  // week, so that `jobhook failed` finds them; the hand-off also finds archived ones, for dedupe.
  const boss = new PgBoss({
    connectionString: databaseUrl,
    schema,
    archiveCompletedAfterSeconds: 3 * 24 * 3600,
    archiveFailedAfterSeconds: 7 * 24 * 3600,
  });
  boss.on('error', (error) => console.error(`pg-boss: ${error.message}`));
  await boss.start();
  return boss;
}

/** The web process: receives deliveries at /webhooks and queues each verified event. */
export async function startServer(options: PgBossAppOptions & { port?: number }) {
  const boss = await startBoss(options);
  const receiver = appReceiver(options.secret, { handoff: pgBossHandoff({ boss }) }, () => undefined);
  const server = createServer(nodeHandler(receiver, { path: '/webhooks' }));
  server.listen(options.port ?? 3000, '127.0.0.1');
  await once(server, 'listening');
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/webhooks`,
    async close() {
      await new Promise((resolve) => server.close(resolve));
      await receiver.close();
      await boss.stop({ graceful: false });
    },
  };
}

/** A worker process: runs the handlers for the queued events. */
export async function startWorker(options: PgBossAppOptions) {
  const boss = await startBoss(options);
  // The same hand-off as the web process's: the worker consumes its queue, in the boss's schema.
  const handoff = pgBossHandoff({ boss });
  const receiver = appReceiver(options.secret, { handoff }, options.log ?? console.log);
  const worker = await handoff.work(receiver, { pollingIntervalSeconds: 0.5 });
  return {
    async close() {
      await worker.close();
      await boss.stop({ graceful: false });
    },
  };
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const { WEBHOOK_SECRET: secret, DATABASE_URL: databaseUrl } = process.env;
  if (!secret || !databaseUrl) {
    console.error('Set WEBHOOK_SECRET and DATABASE_URL.');
    process.exit(1);
  }
  if (process.argv[2] === 'worker') {
    const worker = await startWorker({ databaseUrl, secret });
    console.log('Running the handlers of queued webhook events');
    process.once('SIGTERM', () => void worker.close());
  } else {
    const app = await startServer({ databaseUrl, secret, port: Number(process.env.PORT ?? 3000) });
    console.log(`Receiving webhooks at ${app.url}`);
    process.once('SIGTERM', () => void app.close());
  }
}
