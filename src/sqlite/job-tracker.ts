import { func, optionNames, refuseUnknownOptions } from '../common/option-checks.js';
import {
  checkTaskId,
  checkTenant,
  resolveTrackerTimes,
  type JobTracker,
  type TrackedJob,
  type TrackerTimes,
} from '../tracker/job-tracker.js';
import { fullySynced, openDatabase, sqliteTable, storeStep, type SqliteDatabase } from './database.js';

const WHERE = 'sqliteJobTracker';

/** Options of {@link sqliteJobTracker}. */
export interface SqliteJobTrackerOptions extends TrackerTimes {
  /** The database file, e.g. `'./jobhook.db'`: created if absent; the dedupe store's file may be the same. */
  path: string;
  /** The table's name. Default `jobhook_jobs`. */
  table?: string;
  /** Clock in milliseconds, for `track` without a time. Default `Date.now`. */
  now?: () => number;
}

/** The SQLite tracker: its options, resolved. Its calls answer at once (better-sqlite3 is synchronous). */
export interface SqliteJobTracker extends JobTracker {
  readonly path: string;
  readonly table: string;
  track(taskId: string, submittedAt?: number, tenant?: string): void;
  settle(taskId: string, tenant?: string): void;
  has(taskId: string, tenant?: string): boolean;
  claimDue(request: Parameters<JobTracker['claimDue']>[0]): readonly TrackedJob[];
  release(taskId: string, owner: string, nextPollAt: number): void;
  pending(options?: { limit?: number }): readonly TrackedJob[];
}

interface Row {
  task_id: string;
  submitted_at: number;
  polls: number;
  tenant: string | null;
}

const SQLITE_JOB_TRACKER_OPTIONS = optionNames<SqliteJobTrackerOptions>()([
  'path',
  'table',
  'now',
  'leaseMs',
  'maxAgeMs',
]);

/**
 * A {@link JobTracker} in a SQLite file, shared by the processes on the machine that open it: a
 * claim is one UPDATE, which holds the file's write lock, so each due task goes to one claimant.
 */
export function sqliteJobTracker(options: SqliteJobTrackerOptions): SqliteJobTracker {
  refuseUnknownOptions(options, SQLITE_JOB_TRACKER_OPTIONS, WHERE);
  const table = sqliteTable(WHERE, options?.table, 'jobhook_jobs');
  const { leaseMs, maxAgeMs } = resolveTrackerTimes(WHERE, options);
  const now = func(WHERE, 'now', options?.now) ?? Date.now;
  const db = openDatabase(options?.path, WHERE);
  const sql = statements(db, table);
  const step = <T>(what: string, run: () => T) =>
    storeStep('job_tracker_failed', `The job tracker failed to ${what}`, run);

  return {
    path: db.name,
    table,
    leaseMs,
    maxAgeMs,
    track(taskId, submittedAt = now(), tenant) {
      checkTaskId(taskId);
      checkTenant(tenant);
      // Flushed: lost in a power cut, a task whose webhook never comes would never be polled.
      step('track', () =>
        fullySynced(db, () => sql.track.run(taskId, Math.round(submittedAt), tenant ?? null)),
      );
    },
    settle(taskId, tenant) {
      checkTenant(tenant);
      step('settle', () =>
        tenant === undefined ? sql.settle.run(taskId) : sql.settleForTenant.run(taskId, tenant),
      );
    },
    has(taskId, tenant) {
      checkTenant(tenant);
      return step('look a task up', () => sql.has.get(taskId, tenant ?? null, tenant ?? null)) !== undefined;
    },
    claimDue({ owner, limit, afterMs, now: at }) {
      if (limit <= 0) return [];
      const rows = step('claim', () =>
        sql.claim.all({
          owner,
          now: Math.round(at),
          after: Math.round(afterMs),
          limit,
          due: Math.round(at + leaseMs),
        }),
      ) as Row[];
      // RETURNING keeps no order: the oldest due first, as the contract says.
      return jobs(rows).sort((a, b) => a.submittedAt - b.submittedAt);
    },
    release(taskId, owner, nextPollAt) {
      step('release', () => sql.release.run(Math.round(nextPollAt), taskId, owner));
    },
    pending({ limit = 100 } = {}) {
      if (limit <= 0) return [];
      return jobs(step('list', () => sql.pending.all(limit)) as Row[]);
    },
  };
}

function jobs(rows: Row[]): TrackedJob[] {
  return rows.map((row) => {
    const job = { taskId: row.task_id, submittedAt: row.submitted_at, polls: row.polls };
    return row.tenant === null ? job : { ...job, tenant: row.tenant };
  });
}

/** The table (created if absent) and the tracker's statements on it; `due_at` is NULL until a first claim. */
function statements(db: SqliteDatabase, table: string) {
  db.exec(`CREATE TABLE IF NOT EXISTS "${table}" (
      task_id TEXT PRIMARY KEY,
      submitted_at INTEGER NOT NULL,
      polls INTEGER NOT NULL DEFAULT 0,
      owner TEXT,
      due_at INTEGER,
      tenant TEXT
    ) WITHOUT ROWID;
    CREATE INDEX IF NOT EXISTS "${table}_submitted" ON "${table}" (submitted_at);
    CREATE INDEX IF NOT EXISTS "${table}_due" ON "${table}" (due_at);`);
  return {
    track: db.prepare(`INSERT INTO "${table}" (task_id, submitted_at, tenant) VALUES (?, ?, ?)
      ON CONFLICT (task_id) DO NOTHING`),
    settle: db.prepare(`DELETE FROM "${table}" WHERE task_id = ?`),
    settleForTenant: db.prepare(`DELETE FROM "${table}" WHERE task_id = ? AND tenant = ?`),
    has: db.prepare(`SELECT 1 FROM "${table}" WHERE task_id = ? AND (? IS NULL OR tenant = ?)`),
    claim: db.prepare(`UPDATE "${table}" SET owner = @owner, polls = polls + 1, due_at = @due
      WHERE task_id IN (
        SELECT task_id FROM "${table}"
        WHERE (due_at IS NULL AND submitted_at <= @now - @after) OR due_at <= @now
        ORDER BY coalesce(due_at, submitted_at + @after), submitted_at
        LIMIT @limit)
      RETURNING task_id, submitted_at, polls, tenant`),
    release: db.prepare(`UPDATE "${table}" SET owner = NULL, due_at = ? WHERE task_id = ? AND owner = ?`),
    pending: db.prepare(
      `SELECT task_id, submitted_at, polls, tenant FROM "${table}" ORDER BY submitted_at LIMIT ?`,
    ),
  };
}
