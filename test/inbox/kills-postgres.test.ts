// The inbox's SIGKILL scenario (kills-scenario.ts) on PostgreSQL, in a schema of this run's own.
import { join } from 'node:path';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { afterAll, beforeAll, describe, it } from 'vitest';
import { DATABASE_URL, postgresAvailable, postgresForTest } from '../support/services.js';
import { checkRuns, sigkillScenario } from './kills-scenario.js';

const available = await postgresAvailable();

describe.runIf(available)('the inbox on PostgreSQL, killed three times', () => {
  let service: Awaited<ReturnType<typeof postgresForTest>>;
  let dir: string;
  beforeAll(async () => {
    service = await postgresForTest();
    dir = await mkdtemp(join(tmpdir(), 'jobhook-kills-'));
  });
  afterAll(async () => {
    await service.cleanup();
    await rm(dir, { recursive: true, force: true });
  });

  it(
    'loses no outcome of 1,000 deliveries, and runs one twice only across a kill',
    { timeout: 240_000 },
    async () => {
      const result = await sigkillScenario(
        { ENGINE: 'postgres', DATABASE_URL, SCHEMA: service.schema },
        join(dir, 'runs.txt'),
      );
      checkRuns(result);
    },
  );
});
