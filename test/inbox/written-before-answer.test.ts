// A delivery is in the database at the moment its 2xx arrives, read through a connection of the
// test's own, never the receiver's. A receiver process (receiver-process.ts) is sent deliveries over
// HTTP while the test holds the inbox's write lock on another connection (SQLite: BEGIN IMMEDIATE;
// PostgreSQL: LOCK TABLE ... IN SHARE MODE, which lets reads through and holds inserts back). A
// receiver that answered before its write would answer while the lock is held, and the read, made
// then, with the lock still held, would not find the delivery. Otherwise the lock is released
// (PostgreSQL: once the insert is seen waiting for it; SQLite, whose waiting writer cannot be seen
// from outside: after a moment, well within its 5 s busy timeout), the answer comes, and the read
// made when it arrives must find the delivery. A 503 (a write that gave up) is retried, as a gateway would.
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { signDelivery } from 'jobhook/testing';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { completedPayload, SECRET } from '../fixtures.js';
import { startChild, stopChild, type Child } from '../many-instances/processes.js';
import { DATABASE_URL, postgresAvailable, postgresForTest } from '../support/services.js';

/** The write lock of the inbox's table, held on a connection of the test's own. */
interface Lock {
  take(): Promise<void>;
  /** Resolves once a writer is seen waiting for the lock (or, where that cannot be seen, after a moment). */
  waited(signal: AbortSignal): Promise<void>;
  release(): Promise<void>;
}

interface Engine {
  lock: Lock;
  /** The status of the delivery with this `webhook-id`, read on another connection; undefined if absent. */
  read(deliveryId: string): Promise<string | undefined>;
  close(): Promise<void>;
}

const DELIVERIES = 5;

function writtenBeforeAnswer(start: () => Promise<{ child: Child; engine: Engine }>) {
  it('holds each delivery it answers 2xx in the database when the answer arrives', async () => {
    const { child, engine } = await start();
    const port = Number(child.readyLine.split(' ')[1]);
    const post = async (delivery: {
      headers: Record<string, string>;
      body: string | Uint8Array<ArrayBuffer>;
    }) => {
      const response = await fetch(`http://127.0.0.1:${port}/webhooks`, { method: 'POST', ...delivery });
      await response.arrayBuffer();
      return response.status;
    };
    try {
      // One delivery first, with no lock, run to its end: the table exists, and the receiver is warm.
      const first = signDelivery({
        secret: SECRET,
        payload: completedPayload({ id: `evt_${randomUUID()}` }),
      });
      expect(await post(first)).toBe(200);
      while ((await engine.read(first.id)) !== 'handled') await sleep(10);

      let answeredWhileHeld = 0;
      for (let n = 0; n < DELIVERIES; n++) {
        const delivery = signDelivery({
          secret: SECRET,
          payload: completedPayload({ id: `evt_${randomUUID()}` }),
        });
        for (;;) {
          await engine.lock.take();
          const answer = post(delivery);
          const stop = new AbortController();
          const first = await Promise.race([
            answer.then(() => 'answer' as const),
            engine.lock.waited(stop.signal).then(() => 'waiting' as const),
          ]);
          stop.abort();
          let status: number;
          let stored: string | undefined;
          if (first === 'answer') {
            // Answered while the write lock is held: read now, before anything could be written.
            status = await answer;
            answeredWhileHeld++;
            stored = await engine.read(delivery.id);
            await engine.lock.release();
          } else {
            await engine.lock.release();
            status = await answer;
            stored = await engine.read(delivery.id);
          }
          if (status === 503) continue; // not stored, and said so: the gateway sends it again
          expect(status).toBe(200);
          expect(stored ?? 'absent', `delivery ${n}, at the moment its ${status} arrived`).toMatch(
            /^(pending|handled)$/,
          );
          break;
        }
      }
      console.info(`${answeredWhileHeld} of ${DELIVERIES} answers came while the write lock was held`);
    } finally {
      await stopChild(child, 'SIGKILL');
      await engine.close();
    }
  });
}

/** better-sqlite3 as the test uses it (the package ships no types). */
interface Connection {
  exec(sql: string): unknown;
  prepare(sql: string): { get(...values: unknown[]): unknown };
  close(): void;
}
const Database = createRequire(import.meta.url)('better-sqlite3') as new (
  path: string,
  options?: { timeout?: number },
) => Connection;

describe('the SQLite inbox, when a receiver process answers 2xx', () => {
  let dir: string;
  beforeAll(() => void (dir = mkdtempSync(join(tmpdir(), 'jobhook-written-'))));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  writtenBeforeAnswer(async () => {
    const path = join(dir, 'jobhook.db');
    const child = await startChild('../inbox/receiver-process.ts', {
      ENGINE: 'sqlite',
      DB_PATH: path,
      SECRET,
      RUNS_FILE: join(dir, 'runs.txt'),
      LEASE_MS: '30000',
    });
    const holder = new Database(path, { timeout: 5000 });
    const reader = new Database(path, { timeout: 5000 });
    const select = reader.prepare('SELECT status FROM jobhook_inbox WHERE delivery_id = ?');
    return {
      child,
      engine: {
        lock: {
          take: async () => void holder.exec('BEGIN IMMEDIATE'),
          // A writer waiting on SQLite's busy timeout shows nowhere: hold the lock a moment.
          waited: (signal) => sleep(500, undefined, { signal }).catch(() => undefined),
          release: async () => void holder.exec('COMMIT'),
        },
        read: async (id) => (select.get(id) as { status: string } | undefined)?.status,
        close: async () => {
          holder.close();
          reader.close();
        },
      },
    };
  });
});

const available = await postgresAvailable();

describe.runIf(available)('the PostgreSQL inbox, when a receiver process answers 2xx', () => {
  let service: Awaited<ReturnType<typeof postgresForTest>>;
  beforeAll(async () => {
    service = await postgresForTest();
  });
  afterAll(() => service.cleanup());

  writtenBeforeAnswer(async () => {
    const { schema } = service;
    const dir = mkdtempSync(join(tmpdir(), 'jobhook-written-pg-'));
    const child = await startChild('../inbox/receiver-process.ts', {
      ENGINE: 'postgres',
      DATABASE_URL,
      SCHEMA: schema,
      SECRET,
      RUNS_FILE: join(dir, 'runs.txt'),
      LEASE_MS: '30000',
    });
    const holder = new pg.Client({ connectionString: DATABASE_URL });
    const reader = new pg.Client({ connectionString: DATABASE_URL });
    for (const client of [holder, reader]) {
      client.on('error', () => undefined);
      await client.connect();
    }
    const table = `"${schema}".inbox`;
    return {
      child,
      engine: {
        lock: {
          async take() {
            await holder.query('BEGIN');
            await holder.query(`LOCK TABLE ${table} IN SHARE MODE`);
          },
          async waited(signal) {
            while (!signal.aborted) {
              const { rows } = await reader.query(
                `SELECT count(*)::int AS n FROM pg_locks WHERE relation = $1::regclass AND NOT granted`,
                [table],
              );
              if (rows[0].n > 0) return;
              await sleep(5);
            }
          },
          release: async () => void (await holder.query('COMMIT')),
        },
        async read(id) {
          const { rows } = await reader.query(`SELECT status FROM ${table} WHERE delivery_id = $1`, [id]);
          return rows[0]?.status as string | undefined;
        },
        async close() {
          await holder.end();
          await reader.end();
          rmSync(dir, { recursive: true, force: true });
        },
      },
    };
  });
});
