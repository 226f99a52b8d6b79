// jobhook/postgres against a real PostgreSQL: the shared contract in a schema of this run's own,
// then what is Postgres's own (the table, its name, cleanup, a connection that dies).
import { randomUUID } from 'node:crypto';
import pg from 'pg';
import { JobhookError } from 'jobhook';
import { postgresDedupeMigration, postgresDedupeStore } from 'jobhook/postgres';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { storeContract } from '../stores/store-contract.js';
import { DATABASE_URL, freePort, postgresAvailable, postgresForTest } from '../support/services.js';

const available = await postgresAvailable();

describe.runIf(available)('postgresDedupeStore', () => {
  let service: Awaited<ReturnType<typeof postgresForTest>>;
  beforeAll(async () => {
    service = await postgresForTest();
  });
  afterAll(() => service.cleanup());
  const table = () => `${service.schema}.deliveries`;

  storeContract({
    make: (times) => postgresDedupeStore({ pool: service.pool, table: table(), ...times }),
  });

  it('creates its table once under concurrent first use by several instances', async () => {
    const name = `${service.schema}.first_use`;
    const stores = Array.from({ length: 8 }, () => postgresDedupeStore({ pool: service.pool, table: name }));
    const key = `evt_${randomUUID()}`;
    const results = await Promise.all(stores.map(async (store) => store.claim(key, randomUUID())));
    expect(results.filter((r) => r === 'new')).toHaveLength(1);
    const { rows } = await service.pool.query(
      `SELECT count(*)::int AS n FROM pg_tables WHERE schemaname = $1 AND tablename = 'first_use'`,
      [service.schema],
    );
    expect(rows[0].n).toBe(1);
  });

  it('exports its SQL for your own migrations, and then creates nothing itself', async () => {
    const name = `${service.schema}.migrated`;
    const store = postgresDedupeStore({ pool: service.pool, table: name, createTable: false });
    await expect(Promise.resolve(store.claim('evt_1', 'a'))).rejects.toThrow(/does not exist/);
    const sql = postgresDedupeMigration(name);
    expect(sql).toMatch(/^CREATE TABLE IF NOT EXISTS "jobhook_\w+"\."migrated"/);
    await service.pool.query(sql);
    await service.pool.query(sql); // twice: it is safe to run again
    expect(await store.claim('evt_1', 'a')).toBe('new');
  });

  it.each(['x; DROP TABLE users', 'a.b.c', '"quoted"', '1table', '', 'a'.repeat(64), 'public.x-y'])(
    'refuses the table name %j (names are written into SQL text)',
    (name) => {
      expect(() => postgresDedupeStore({ pool: service.pool, table: name })).toThrow(JobhookError);
      expect(() => postgresDedupeMigration(name)).toThrow(JobhookError);
    },
  );

  it('deletes forgotten rows now and then, after a complete', async () => {
    const name = `${service.schema}.cleaned`;
    const store = postgresDedupeStore({ pool: service.pool, table: name, ttlMs: 50, cleanupIntervalMs: 1 });
    for (const key of ['evt_a', 'evt_b']) {
      await store.claim(key, 'o');
      await store.complete(key, 'o');
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
    await store.claim('evt_c', 'o');
    await store.complete('evt_c', 'o'); // starts the cleanup, which does not hold the call up
    await expect
      .poll(async () =>
        (await service.pool.query(`SELECT key FROM ${name} ORDER BY key`)).rows.map((r) => r.key),
      )
      .toEqual(['evt_c']);
  });

  it('rejects, never hangs, when its connection dies during a call', async () => {
    const pool = new pg.Pool({ connectionString: DATABASE_URL, max: 1 });
    pool.on('error', () => undefined);
    const name = `${service.schema}.dying`;
    const store = postgresDedupeStore({ pool, table: name, timeoutMs: 0 });
    const key = `evt_${randomUUID()}`;
    expect(await store.claim(key, 'a')).toBe('new');
    await store.release(key, 'a');
    const { rows } = await pool.query('SELECT pg_backend_pid() AS pid');
    // Another session locks the row, so the store's claim waits on it; then its backend is killed.
    const blocker = new pg.Client({ connectionString: DATABASE_URL });
    await blocker.connect();
    try {
      await blocker.query('BEGIN');
      await blocker.query(`INSERT INTO ${name} (key, owner, expires_at) VALUES ($1, 'x', now())`, [key]);
      // The expectation is attached at once: the claim may reject before the kill's own answer
      // arrives, and a rejection nobody listens to yet is an unhandled one.
      const refused = expect(Promise.resolve(store.claim(key, 'b'))).rejects.toThrow(JobhookError);
      await new Promise((resolve) => setTimeout(resolve, 200));
      await blocker.query('SELECT pg_terminate_backend($1)', [rows[0].pid]);
      await refused;
      await blocker.query('ROLLBACK');
    } finally {
      await blocker.end();
    }
    // The pool replaces the dead connection: the store works again.
    expect(await store.claim(key, 'c')).toBe('new');
    await pool.end();
  });

  it('rejects when the database is unreachable', async () => {
    const port = await freePort();
    const pool = new pg.Pool({ connectionString: `postgres://postgres@127.0.0.1:${port}/test` });
    const store = postgresDedupeStore({ pool });
    const failure = await Promise.resolve(store.claim('evt_1', 'a')).catch((error: unknown) => error);
    expect((failure as JobhookError).code).toBe('dedupe_store_failed');
    await pool.end();
  });
});
