// jobhook/postgres's job tracker against a real PostgreSQL: the shared contract, in a schema of
// this run's own.
import { postgresJobTracker, postgresJobTrackerMigration } from 'jobhook/postgres';
import { JobhookError } from 'jobhook';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { trackerContract } from '../stores/tracker-contract.js';
import { postgresAvailable, postgresForTest } from '../support/services.js';

const available = await postgresAvailable();

describe.runIf(available)('postgresJobTracker', () => {
  let service: Awaited<ReturnType<typeof postgresForTest>>;
  beforeAll(async () => {
    service = await postgresForTest();
  });
  afterAll(() => service.cleanup());
  let tables = 0;

  trackerContract({
    make: (times) =>
      postgresJobTracker({ pool: service.pool, table: `${service.schema}.jobs${++tables}`, ...times }),
  });

  it('exports its SQL for your own migrations, and then creates nothing itself', async () => {
    const table = `${service.schema}.migrated`;
    const tracker = postgresJobTracker({ pool: service.pool, table, createTable: false });
    await expect(Promise.resolve(tracker.track('task_1'))).rejects.toThrow(/does not exist/);
    await service.pool.query(postgresJobTrackerMigration(table));
    await service.pool.query(postgresJobTrackerMigration(table));
    await tracker.track('task_1');
    expect((await tracker.pending()).map((job) => job.taskId)).toEqual(['task_1']);
  });

  it('adds the tenant column to a table created before tenants, and reads its rows as without one', async () => {
    const table = `${service.schema}.before_tenants`;
    // The table as postgresJobTrackerMigration created it before tenants, with one task in it.
    await service.pool.query(`CREATE TABLE ${table} (
      task_id text PRIMARY KEY,
      submitted_at bigint NOT NULL,
      polls integer NOT NULL DEFAULT 0,
      owner text,
      due_at bigint
    )`);
    const t0 = 1_800_000_000_000;
    await service.pool.query(`INSERT INTO ${table} (task_id, submitted_at) VALUES ('task_old', $1)`, [t0]);
    const tracker = postgresJobTracker({ pool: service.pool, table, leaseMs: 5000 });
    await tracker.track('task_new', t0 + 1, 'tenant-a');
    const { rows } = await service.pool.query(
      `SELECT data_type, is_nullable FROM information_schema.columns
       WHERE table_schema = $1 AND table_name = 'before_tenants' AND column_name = 'tenant'`,
      [service.schema],
    );
    expect(rows).toEqual([{ data_type: 'text', is_nullable: 'YES' }]);
    expect(await tracker.claimDue({ owner: 'o', limit: 10, afterMs: 1000, now: t0 + 1001 })).toStrictEqual([
      { taskId: 'task_old', submittedAt: t0, polls: 1 },
      { taskId: 'task_new', submittedAt: t0 + 1, polls: 1, tenant: 'tenant-a' },
    ]);
    await tracker.settle('task_old', 'tenant-a');
    await tracker.settle('task_new', 'tenant-b');
    expect((await tracker.pending()).map((job) => job.taskId)).toEqual(['task_old', 'task_new']);
    await tracker.settle('task_old');
    await tracker.settle('task_new', 'tenant-a');
    expect(await tracker.pending()).toEqual([]);
  });

  it('refuses a pool that is not one, and a table name that is no name', () => {
    expect(() => postgresJobTracker({ pool: undefined as never })).toThrow(JobhookError);
    expect(() => postgresJobTracker({ pool: service.pool, table: 'x; DROP TABLE y' })).toThrow(JobhookError);
  });
});
