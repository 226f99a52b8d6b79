// One receiver process of the inbox's process tests (the SIGKILLs, a write that fails, two processes
// on one file): `node --import tsx receiver-process.ts`, with an inbox and a durable dedupe store on
// ENGINE (`postgres`: DATABASE_URL and SCHEMA; `sqlite`: DB_PATH). Its handler's side effect is a
// line "<event id> <pid>" appended to RUNS_FILE, written to disk before the handler returns; it
// prints "listening <port>" once it serves on 127.0.0.1. Optional: LEASE_MS (default 1000, for the
// inbox and the dedupe store), TIMEOUT_MS (postgresInbox's `timeoutMs`, default its own).
import { appendFileSync } from 'node:fs';
import { once } from 'node:events';
import { createServer } from 'node:http';
import { createReceiver, type ReceiverOptions } from 'jobhook';
import { nodeHandler } from 'jobhook/node';

const env = (name: string) => {
  const value = process.env[name];
  if (value === undefined) throw new Error(`receiver-process.ts needs ${name}`);
  return value;
};

// Short leases and retries: a delivery whose process was killed runs again within a second or two.
const LEASE_MS = Number(process.env.LEASE_MS ?? 1000);
const retry = { attempts: 100, firstMs: 100, maxMs: 500 };

async function stores(): Promise<Pick<ReceiverOptions, 'inbox' | 'dedupe'>> {
  if (env('ENGINE') === 'postgres') {
    const { default: pg } = await import('pg');
    const { postgresInbox, postgresDedupeStore } = await import('jobhook/postgres');
    const pool = new pg.Pool({ connectionString: env('DATABASE_URL'), max: 8 });
    pool.on('error', () => undefined);
    const schema = env('SCHEMA');
    return {
      inbox: postgresInbox({
        pool,
        table: `${schema}.inbox`,
        leaseMs: LEASE_MS,
        retry,
        ...(process.env.TIMEOUT_MS !== undefined && { timeoutMs: Number(process.env.TIMEOUT_MS) }),
      }),
      dedupe: postgresDedupeStore({ pool, table: `${schema}.deliveries`, leaseMs: LEASE_MS }),
    };
  }
  const { sqliteInbox, sqliteDedupeStore } = await import('jobhook/sqlite');
  const path = env('DB_PATH');
  return {
    inbox: sqliteInbox({ path, leaseMs: LEASE_MS, retry }),
    dedupe: sqliteDedupeStore({ path, leaseMs: LEASE_MS }),
  };
}

const runs = env('RUNS_FILE');
const receiver = createReceiver({ secret: env('SECRET'), ...(await stores()) });
receiver.onJobCompleted((event) => {
  appendFileSync(runs, `${event.id} ${process.pid}\n`);
});
const server = createServer(nodeHandler(receiver, { path: '/webhooks' }));
server.listen(0, '127.0.0.1');
await once(server, 'listening');
console.log(`listening ${(server.address() as { port: number }).port}`);
