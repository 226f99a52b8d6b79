// The inbox's SIGKILL scenario (kills-scenario.ts) on SQLite, on a file of this run's own.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, it } from 'vitest';
import { checkRuns, sigkillScenario } from './kills-scenario.js';

describe('the inbox on SQLite, killed three times', () => {
  let dir: string;
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'jobhook-kills-sqlite-'));
  });
  afterAll(() => rm(dir, { recursive: true, force: true }));

  it(
    'loses no outcome of 1,000 deliveries, and runs one twice only across a kill',
    { timeout: 240_000 },
    async () => {
      const result = await sigkillScenario(
        { ENGINE: 'sqlite', DB_PATH: join(dir, 'jobhook.db') },
        join(dir, 'runs.txt'),
      );
      checkRuns(result);
    },
  );
});
