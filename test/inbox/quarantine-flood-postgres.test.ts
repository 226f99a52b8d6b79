// The quarantine of postgresInbox under a flood (quarantine-flood.ts: its caps, small), in a schema
// of this run's own. And, with the inbox's writes held back by a lock, the 16 MiB cap on refused
// deliveries waiting to be written.
import { randomBytes } from 'node:crypto';
import { postgresDedupeStore, postgresInbox } from 'jobhook/postgres';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DATABASE_URL, postgresAvailable, postgresForTest } from '../support/services.js';
import { flood, idOf, MIB, quarantineFlood, served } from './quarantine-flood.js';

const available = await postgresAvailable();

describe.runIf(available)('the PostgreSQL quarantine under a flood', () => {
  let service: Awaited<ReturnType<typeof postgresForTest>>;
  let made = 0;
  beforeAll(async () => {
    service = await postgresForTest();
  });
  afterAll(() => service.cleanup());

  quarantineFlood({
    async make(options) {
      const n = ++made;
      // Reading back megabytes of forged bodies can take seconds on a busy machine: the default
      // 5 s bound on each query is not what is tested here.
      const inbox = postgresInbox({
        pool: service.pool,
        table: `${service.schema}.flood${n}`,
        timeoutMs: 60_000,
        ...options,
      });
      return {
        inbox,
        dedupe: postgresDedupeStore({ pool: service.pool, table: `${service.schema}.deliveries${n}` }),
        async diskBytes() {
          await inbox.list({ limit: 1 }); // the table made
          const { rows } = await service.pool.query(
            'SELECT pg_total_relation_size($1::regclass)::bigint AS n',
            [inbox.table],
          );
          return Number(rows[0].n);
        },
      };
    },
  });

  it('keeps at most 16 MiB of refused deliveries waiting to be written, and drops the rest', async () => {
    const inbox = postgresInbox({
      pool: service.pool,
      table: `${service.schema}.held`,
      // No time-out: the writes wait for the lock for as long as the test holds it.
      timeoutMs: 0,
    });
    await inbox.list({ limit: 1 }); // the table made
    const { post, close } = await served(
      inbox,
      postgresDedupeStore({ pool: service.pool, table: `${service.schema}.held_deliveries` }),
    );
    const locker = new pg.Client({ connectionString: DATABASE_URL });
    locker.on('error', () => undefined);
    await locker.connect();
    // Bodies of about 1 MB, random so that PostgreSQL keeps them as they are.
    const padding = () => randomBytes(750_000).toString('base64').slice(0, 999_500);
    let sent: string[];
    try {
      await locker.query('BEGIN');
      await locker.query(`LOCK TABLE ${inbox.table} IN SHARE MODE`);
      // 40 MB of forged deliveries, each answered 401 at once, while none of them can be written.
      sent = (await flood(post, { forged: 40, padding, concurrency: 1 })).forgedIds;
    } finally {
      await locker.query('COMMIT');
      await locker.end();
    }
    await close();
    const kept = await inbox.list({ status: 'refused', limit: 1000 });
    const largest = Math.max(...kept.map((row) => row.body.byteLength));
    // The first ones, as many as fit in 16 MiB, waited for the lock; the others were not kept.
    expect(kept.length).toBe(Math.floor((16 * MIB) / largest));
    // (Written in whatever order the lock let them go.)
    expect(kept.map(idOf).sort()).toEqual(sent.slice(0, kept.length).sort());
  });
});
