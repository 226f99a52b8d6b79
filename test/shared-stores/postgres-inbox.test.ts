// postgresInbox against a real PostgreSQL: the shared Inbox contract in a schema of this run's own,
// then what is Postgres's own (its migration, its table names).
import type pg from 'pg';
import { JobhookError } from 'jobhook';
import { postgresInbox, postgresInboxMigration } from 'jobhook/postgres';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { inboxContract } from '../stores/inbox-contract.js';
import { postgresAvailable, postgresForTest } from '../support/services.js';

const available = await postgresAvailable();

describe.runIf(available)('postgresInbox', () => {
  let service: Awaited<ReturnType<typeof postgresForTest>>;
  let tables = 0;
  beforeAll(async () => {
    service = await postgresForTest();
  });
  afterAll(() => service.cleanup());

  inboxContract({
    make: (options) =>
      postgresInbox({ pool: service.pool, table: `${service.schema}.inbox${++tables}`, ...options }),
  });

  it('exports its SQL for your own migrations, and then creates nothing itself', async () => {
    const name = `${service.schema}.migrated`;
    const inbox = postgresInbox({ pool: service.pool, table: name, createTable: false });
    await expect(inbox.list()).rejects.toThrow(/does not exist/);
    const sql = postgresInboxMigration(name);
    await service.pool.query(sql);
    await service.pool.query(sql);
    expect(await inbox.list()).toEqual([]);
  });

  it.each(['x; DROP TABLE users', 'a.b.c', '1table'])('refuses the table name %j', (name) => {
    expect(() => postgresInbox({ pool: service.pool, table: name })).toThrow(JobhookError);
  });

  it('refuses options it does not know, and a pool that is not one', () => {
    expect(() => postgresInbox({ pool: service.pool, retianMs: 1 } as never)).toThrow(/retainMs/);
    expect(() => postgresInbox({ pool: {} as pg.Pool })).toThrow(/pool/);
  });
});
