import { bounded } from '../common/deadline.js';
import {
  checkOption,
  MS_OR_NONE,
  optionNames,
  refuseUnknownOptions,
  wholeNumber,
} from '../common/option-checks.js';
import { PG_POOL, quotedTable, type PostgresQueryable } from './dedupe-store.js';
import {
  checkTaskId,
  checkTenant,
  resolveTrackerTimes,
  type TrackerTimes,
  type JobTracker,
  type TrackedJob,
} from '../tracker/job-tracker.js';

/** Options of {@link postgresJobTracker}. */
export interface PostgresJobTrackerOptions extends TrackerTimes {
  /** A `pg` Pool; the tracker never ends it. */
  pool: PostgresQueryable;
  /** `name` or `schema.name`. Default `jobhook_jobs`. */
  table?: string;
  /** Create the table on first use. Default `true`; `false` if you run {@link postgresJobTrackerMigration}. */
  createTable?: boolean;
  /** Longest wait for one query, in ms, before it rejects. Default 5,000; 0 for none. */
  timeoutMs?: number;
  /** Clock in milliseconds, for `track` without a time. Default `Date.now`. */
  now?: () => number;
}

/** The Postgres tracker: its options, resolved. */
export interface PostgresJobTracker extends JobTracker {
  readonly table: string;
  has(taskId: string, tenant?: string): Promise<boolean>;
}

const DEFAULT_TABLE = 'jobhook_jobs';

interface Row {
  task_id: string;
  submitted_at: string;
  polls: number;
  tenant: string | null;
}

/** The SQL that creates the tracker's table, for your own migrations; safe to rerun (rerun it after upgrades). */
export function postgresJobTrackerMigration(table: string = DEFAULT_TABLE): string {
  const name = quotedTable(table, 'postgresJobTrackerMigration');
  const base = table.split('.').pop()!.slice(0, 48);
  return [
    `CREATE TABLE IF NOT EXISTS ${name} (`,
    `  task_id text PRIMARY KEY,`,
    `  submitted_at bigint NOT NULL,`,
    `  polls integer NOT NULL DEFAULT 0,`,
    `  owner text,`,
    `  due_at bigint,`,
    `  tenant text`,
    `);`,
    `ALTER TABLE ${name} ADD COLUMN IF NOT EXISTS tenant text;`,
    `CREATE INDEX IF NOT EXISTS "${base}_submitted_idx" ON ${name} (submitted_at);`,
    `CREATE INDEX IF NOT EXISTS "${base}_due_idx" ON ${name} (due_at);`,
    '',
  ].join('\n');
}

const POSTGRES_JOB_TRACKER_OPTIONS = optionNames<PostgresJobTrackerOptions>()([
  'pool',
  'table',
  'createTable',
  'timeoutMs',
  'now',
  'leaseMs',
  'maxAgeMs',
]);

/** A {@link JobTracker} in a PostgreSQL table, shared by every process; claims `FOR UPDATE SKIP LOCKED`. */
export function postgresJobTracker(options: PostgresJobTrackerOptions): PostgresJobTracker {
  refuseUnknownOptions(options, POSTGRES_JOB_TRACKER_OPTIONS, 'postgresJobTracker');
  const pool = options?.pool;
  checkOption('postgresJobTracker', 'pool', pool, typeof pool?.query === 'function', PG_POOL);
  const table = options.table ?? DEFAULT_TABLE;
  const name = quotedTable(table, 'postgresJobTracker');
  const { leaseMs, maxAgeMs } = resolveTrackerTimes('postgresJobTracker', options);
  const timeoutMs = wholeNumber('postgresJobTracker', 'timeoutMs', options.timeoutMs, 5000, {
    min: 0,
    unit: MS_OR_NONE,
  });
  const now = options.now ?? Date.now;

  const sql = {
    track: `INSERT INTO ${name} (task_id, submitted_at, tenant) VALUES ($1, $2, $3)
      ON CONFLICT (task_id) DO NOTHING`,
    settle: `DELETE FROM ${name} WHERE task_id = $1`,
    settleForTenant: `DELETE FROM ${name} WHERE task_id = $1 AND tenant = $2`,
    has: `SELECT 1 FROM ${name} WHERE task_id = $1 AND ($2::text IS NULL OR tenant = $2)`,
    claim: `UPDATE ${name} AS t SET owner = $1, polls = t.polls + 1, due_at = $5
      WHERE t.task_id IN (
        SELECT task_id FROM ${name}
        WHERE (due_at IS NULL AND submitted_at <= $2::bigint - $3::bigint) OR due_at <= $2::bigint
        ORDER BY coalesce(due_at, submitted_at + $3::bigint)
        LIMIT $4 FOR UPDATE SKIP LOCKED)
      RETURNING t.task_id, t.submitted_at, t.polls, t.tenant`,
    release: `UPDATE ${name} SET owner = NULL, due_at = $3 WHERE task_id = $1 AND owner = $2`,
    pending: `SELECT task_id, submitted_at, polls, tenant FROM ${name} ORDER BY submitted_at LIMIT $1`,
  };

  let ready: Promise<unknown> | undefined;
  function ensureTable(): Promise<unknown> | undefined {
    if (options.createTable === false) return undefined;
    if (!ready) {
      const lock = `SELECT pg_advisory_xact_lock(hashtext('jobhook:${table}'));\n`;
      ready = pool.query(lock + postgresJobTrackerMigration(table));
      ready.catch(() => (ready = undefined));
    }
    return ready;
  }

  async function query(what: string, text: string, values: unknown[]) {
    const run = async () => {
      const created = ensureTable();
      if (created) await created;
      return (await pool.query(text, values)).rows as Row[];
    };
    return bounded(run(), timeoutMs, 'job_tracker_failed', `The job tracker failed to ${what}`);
  }
  const jobs = (rows: Row[]): TrackedJob[] =>
    rows.map((row) => {
      const job = { taskId: row.task_id, submittedAt: Number(row.submitted_at), polls: Number(row.polls) };
      return row.tenant == null ? job : { ...job, tenant: row.tenant };
    });

  return {
    table,
    leaseMs,
    maxAgeMs,
    async track(taskId, submittedAt = now(), tenant) {
      checkTaskId(taskId);
      checkTenant(tenant);
      await query('track', sql.track, [taskId, Math.round(submittedAt), tenant ?? null]);
    },
    async settle(taskId, tenant) {
      checkTenant(tenant);
      if (tenant === undefined) await query('settle', sql.settle, [taskId]);
      else await query('settle', sql.settleForTenant, [taskId, tenant]);
    },
    async has(taskId, tenant) {
      checkTenant(tenant);
      return (await query('look a task up', sql.has, [taskId, tenant ?? null])).length > 0;
    },
    async claimDue({ owner, limit, afterMs, now: at }) {
      if (limit <= 0) return [];
      const rows = await query('claim', sql.claim, [
        owner,
        Math.round(at),
        Math.round(afterMs),
        limit,
        Math.round(at + leaseMs),
      ]);
      // RETURNING keeps no order: the oldest due first, as the contract says.
      return jobs(rows).sort((a, b) => a.submittedAt - b.submittedAt);
    },
    async release(taskId, owner, nextPollAt) {
      await query('release', sql.release, [taskId, owner, Math.round(nextPollAt)]);
    },
    async pending({ limit = 100 } = {}) {
      if (limit <= 0) return [];
      return jobs(await query('list', sql.pending, [limit]));
    },
  };
}
