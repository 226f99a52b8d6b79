// `jobhook jobs`, the built binary, against real Redis and PostgreSQL trackers: pending tasks,
// oldest first, with their age and polls; JSON; the tracker named by exactly one flag.
import { redisJobTracker } from 'jobhook/redis';
import { postgresJobTracker } from 'jobhook/postgres';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BUILD_TIMEOUT_MS, ensureDist } from '../support/dist.js';
import { oneLineError, runCli } from './run-cli.js';
import {
  DATABASE_URL,
  REDIS_URL,
  postgresAvailable,
  postgresForTest,
  redisAvailable,
  redisForTest,
} from '../support/services.js';
import { age } from '../../src/tools/cli/jobs.js';

beforeAll(ensureDist, BUILD_TIMEOUT_MS);

const HOUR = 3_600_000;

describe.runIf(await redisAvailable())('jobhook jobs --redis-url', () => {
  let service: ReturnType<typeof redisForTest>;
  beforeAll(async () => {
    service = redisForTest();
    const tracker = redisJobTracker({ redis: service.redis, prefix: service.prefix });
    const now = Date.now();
    await tracker.track('task_newer', now - 5 * 60_000);
    await tracker.track('task_oldest', now - 26 * HOUR);
    await tracker.track('task_settled', now - 30 * HOUR);
    await tracker.settle('task_settled');
  });
  afterAll(() => service.cleanup());

  it('lists the pending tasks oldest first, with their age', async () => {
    const result = await runCli(['jobs', '--redis-url', REDIS_URL, '--prefix', service.prefix]);
    expect(result.code).toBe(0);
    const lines = result.stdout.trimEnd().split('\n');
    expect(lines[0]).toMatch(/^TASK\s+AGE\s+POLLS\s+SUBMITTED$/);
    expect(lines[1]).toMatch(/^task_oldest\s+1d 02h\s+0\s+\d{4}-/);
    expect(lines[2]).toMatch(/^task_newer\s+5m \d\ds\s+0\s+/);
    expect(lines).toHaveLength(3);
  });

  it('prints JSON with --json, and at most --limit', async () => {
    const result = await runCli(['jobs', '--json', '--limit', '1', '--prefix', service.prefix], {
      JOBHOOK_REDIS_URL: REDIS_URL,
    });
    const listed = JSON.parse(result.stdout) as { taskId: string; ageMs: number; polls: number }[];
    expect(listed).toEqual([
      { taskId: 'task_oldest', submittedAt: expect.any(String), ageMs: expect.any(Number), polls: 0 },
    ]);
  });

  it('says so when nothing is pending', async () => {
    const result = await runCli(['jobs', '--redis-url', REDIS_URL, '--prefix', `${service.prefix}empty:`]);
    expect(result.stdout).toBe('No tracked jobs are waiting for their outcome.\n');
  });
});

describe.runIf(await postgresAvailable())('jobhook jobs --database-url', () => {
  let service: Awaited<ReturnType<typeof postgresForTest>>;
  beforeAll(async () => {
    service = await postgresForTest();
    const tracker = postgresJobTracker({ pool: service.pool, table: `${service.schema}.jobs` });
    await tracker.track('task_pg', Date.now() - 90_000);
  });
  afterAll(() => service.cleanup());

  it('lists the pending tasks of a Postgres tracker, and an absent table as none', async () => {
    const result = await runCli([
      'jobs',
      '--database-url',
      DATABASE_URL,
      '--table',
      `${service.schema}.jobs`,
    ]);
    expect(result.stdout).toMatch(/\ntask_pg\s+1m \d\ds\s+0\s+/);
    const none = await runCli([
      'jobs',
      '--database-url',
      DATABASE_URL,
      '--table',
      `${service.schema}.nothing`,
    ]);
    expect(none.code).toBe(0);
    expect(none.stdout).toContain('No tracked jobs');
  });
});

it('needs exactly one tracker', async () => {
  expect(oneLineError(await runCli(['jobs']))).toMatch(/--redis-url or --database-url/);
  const both = await runCli(['jobs', '--redis-url', 'redis://x', '--database-url', 'postgres://y']);
  expect(both.code).toBe(2);
});

it('writes ages a person reads at a glance', () => {
  expect([0, 42_000, 192_000, 2 * HOUR + 300_000, 27 * HOUR].map(age)).toEqual([
    '0s',
    '42s',
    '3m 12s',
    '2h 05m',
    '1d 03h',
  ]);
});
