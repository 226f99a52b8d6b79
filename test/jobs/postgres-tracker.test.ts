// jobhook/postgres's job tracker against a real PostgreSQL: the shared contract, in a schema of
// this run's own.
import { postgresJobTracker, postgresJobTrackerMigration } from 'jobhook/postgres';
import { JobhookError } from 'jobhook';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { trackerContract } from './tracker-contract.js';
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

  it('refuses a pool that is not one, and a table name that is no name', () => {
    expect(() => postgresJobTracker({ pool: undefined as never })).toThrow(JobhookError);
    expect(() => postgresJobTracker({ pool: service.pool, table: 'x; DROP TABLE y' })).toThrow(JobhookError);
  });
});
