// jobhook/sqlite's job tracker against the shared contract, each tracker in a table of its own in
// one file of this run's own; then that the tasks outlive the tracker that tracked them.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { sqliteJobTracker } from 'jobhook/sqlite';
import { afterAll, describe, expect, it } from 'vitest';
import { trackerContract } from './tracker-contract.js';

const dir = mkdtempSync(join(tmpdir(), 'jobhook-sqlite-tracker-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const path = join(dir, 'jobs.db');

describe('sqliteJobTracker', () => {
  let tables = 0;
  trackerContract({ make: (times) => sqliteJobTracker({ path, table: `jobs${++tables}`, ...times }) });

  it('keeps the tasks in the file, for a tracker opened on it later', () => {
    sqliteJobTracker({ path, table: 'kept' }).track('task_1', 1000, 'tenant-a');
    expect(sqliteJobTracker({ path, table: 'kept' }).pending()).toEqual([
      { taskId: 'task_1', submittedAt: 1000, polls: 0, tenant: 'tenant-a' },
    ]);
  });

  it('uses its clock for a task tracked without a time', () => {
    const tracker = sqliteJobTracker({ path, table: 'clocked', now: () => 4242 });
    tracker.track('task_1');
    expect(tracker.pending()).toEqual([{ taskId: 'task_1', submittedAt: 4242, polls: 0 }]);
  });
});
