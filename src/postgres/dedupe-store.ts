import {
  checkOption,
  MS_OR_NONE,
  optionNames,
  positiveInteger,
  refuseUnknownOptions,
  wholeNumber,
} from '../common/option-checks.js';
import type { ClaimResult, DedupeStore } from '../dedupe/dedupe-store.js';
import { bounded } from '../common/deadline.js';

const WHERE = 'postgresDedupeStore';

/** What the stores use of a `pg` Pool (or Client), typed here so pg stays optional. */
export interface PostgresQueryable {
  /** Runs one parameterised statement (a `pg` Pool or Client). */
  query(text: string, values?: unknown[]): Promise<{ rows: unknown[] }>;
}

/** Options of {@link postgresDedupeStore}. */
export interface PostgresDedupeOptions {
  /** A `pg` Pool (`new Pool({ connectionString })`); the store never ends it. */
  pool: PostgresQueryable;
  /** `name` or `schema.name`. Default `jobhook_deliveries`. */
  table?: string;
  /** How long a claim lives without renewal, in ms. Default 30,000. */
  leaseMs?: number;
  /** How long a handled event is remembered, in ms: longer than the sender retries. Default 72 hours. */
  ttlMs?: number;
  /** Create the table on first use. Default `true`; `false` if you run {@link postgresDedupeMigration}. */
  createTable?: boolean;
  /** Delete up to 1,000 forgotten rows at most once per this many ms. Default 60,000; 0: never. */
  cleanupIntervalMs?: number;
  /** Longest wait for one query, in ms, before the delivery answers 500. Default 5,000; 0: the pool's. */
  timeoutMs?: number;
}

/** The Postgres store: its options, resolved. */
export interface PostgresDedupeStore extends DedupeStore {
  readonly table: string;
  readonly ttlMs: number;
}

const HOUR = 60 * 60 * 1000;
/** `$n` milliseconds from the database's clock: every instance shares that one clock. */
const msFromNow = (n: number) => `now() + make_interval(secs => $${n}::float8 / 1000)`;

const POSTGRES_DEDUPE_STORE_OPTIONS = optionNames<PostgresDedupeOptions>()([
  'pool',
  'table',
  'leaseMs',
  'ttlMs',
  'createTable',
  'cleanupIntervalMs',
  'timeoutMs',
]);

/** A {@link DedupeStore} in a PostgreSQL table, shared by every instance: one statement per call. */
export function postgresDedupeStore(options: PostgresDedupeOptions): PostgresDedupeStore {
  refuseUnknownOptions(options, POSTGRES_DEDUPE_STORE_OPTIONS, 'postgresDedupeStore');
  const pool = options?.pool;
  checkOption(WHERE, 'pool', pool, typeof pool?.query === 'function', PG_POOL);
  const table = options.table ?? DEFAULT_TABLE;
  const name = quotedTable(table);
  const leaseMs = positiveInteger(WHERE, 'leaseMs', options.leaseMs, 30_000, 'ms');
  const ttlMs = positiveInteger(WHERE, 'ttlMs', options.ttlMs, 72 * HOUR, 'ms');
  const cleanupIntervalMs = wholeNumber(WHERE, 'cleanupIntervalMs', options.cleanupIntervalMs, 60_000, {
    min: 0,
    unit: MS_OR_NONE,
  });
  const timeoutMs = wholeNumber(WHERE, 'timeoutMs', options.timeoutMs, 5000, { min: 0, unit: MS_OR_NONE });

  const sql = {
    // The CTE's SELECT sees the row as before this statement: one that appeared meanwhile reads `busy`.
    claim: `WITH claimed AS (
        INSERT INTO ${name} AS d (key, owner, expires_at) VALUES ($1, $2, ${msFromNow(3)})
        ON CONFLICT (key) DO UPDATE SET owner = EXCLUDED.owner, expires_at = EXCLUDED.expires_at
        WHERE d.expires_at <= now()
        RETURNING 1)
      SELECT EXISTS (SELECT 1 FROM claimed) AS claimed,
        EXISTS (SELECT 1 FROM ${name} WHERE key = $1 AND owner IS NULL AND expires_at > now()) AS done`,
    renew: `UPDATE ${name} SET expires_at = ${msFromNow(3)}
      WHERE key = $1 AND owner = $2 AND expires_at > now() RETURNING 1`,
    complete: `INSERT INTO ${name} AS d (key, owner, expires_at) VALUES ($1, NULL, ${msFromNow(3)})
      ON CONFLICT (key) DO UPDATE SET owner = NULL, expires_at = EXCLUDED.expires_at
      WHERE d.owner = $2 OR d.expires_at <= now()`,
    release: `DELETE FROM ${name} WHERE key = $1 AND owner = $2`,
    cleanup: `DELETE FROM ${name} WHERE key IN (
        SELECT key FROM ${name} WHERE expires_at < now() LIMIT 1000 FOR UPDATE SKIP LOCKED)`,
  };

  let ready: Promise<unknown> | undefined;
  function ensureTable(): Promise<unknown> | undefined {
    if (options.createTable === false) return undefined;
    if (!ready) {
      ready = pool.query(lockedMigration(table));
      ready.catch(() => (ready = undefined));
    }
    return ready;
  }

  async function query(what: string, text: string, values: unknown[]) {
    const run = async () => {
      const table = ensureTable();
      if (table) await table;
      return (await pool.query(text, values)).rows;
    };
    return bounded(run(), timeoutMs, 'dedupe_store_failed', `The dedupe store failed to ${what}`);
  }

  let lastCleanup = Date.now();
  function maybeCleanup() {
    if (cleanupIntervalMs === 0 || Date.now() - lastCleanup < cleanupIntervalMs) return;
    lastCleanup = Date.now();
    pool.query(sql.cleanup).catch(() => undefined);
  }

  return {
    table,
    leaseMs,
    ttlMs,
    async claim(key, owner): Promise<ClaimResult> {
      const [row] = (await query('claim', sql.claim, [key, owner, leaseMs])) as {
        claimed: boolean;
        done: boolean;
      }[];
      return row?.claimed ? 'new' : row?.done ? 'done' : 'busy';
    },
    async renew(key, owner) {
      return (await query('renew', sql.renew, [key, owner, leaseMs])).length > 0;
    },
    async complete(key, owner) {
      await query('complete', sql.complete, [key, owner, ttlMs]);
      maybeCleanup();
    },
    async release(key, owner) {
      await query('release', sql.release, [key, owner]);
    },
  };
}

/** What `pool` must be, for the stores on PostgreSQL. */
export const PG_POOL = 'a pg Pool, e.g. new Pool({ connectionString: process.env.DATABASE_URL })';

/** The default table name. */
export const DEFAULT_TABLE = 'jobhook_deliveries';

const IDENTIFIER = /^[A-Za-z_][A-Za-z0-9_]{0,62}$/;

/** `table` or `schema.table` as a quoted SQL name; only plain identifiers, since it is written into SQL. */
export function quotedTable(table: string, where = 'postgresDedupeStore'): string {
  const parts = typeof table === 'string' ? table.split('.') : [];
  const valid = parts.length >= 1 && parts.length <= 2 && parts.every((part) => IDENTIFIER.test(part));
  const rule = 'a name or schema.name of letters, digits and _ (not starting with a digit, at most 63 each)';
  checkOption(where, 'table', table, valid, rule);
  return parts.map((part) => `"${part}"`).join('.');
}

/** The SQL that creates the store's table, for your own migrations (`createTable: false`); safe to rerun. */
export function postgresDedupeMigration(table: string = DEFAULT_TABLE): string {
  const name = quotedTable(table, 'postgresDedupeMigration');
  const index = `"${table.split('.').pop()!.slice(0, 50)}_expires_at_idx"`;
  return [
    `CREATE TABLE IF NOT EXISTS ${name} (`,
    `  key text PRIMARY KEY,`,
    `  owner text,`,
    `  expires_at timestamptz NOT NULL`,
    `);`,
    `CREATE INDEX IF NOT EXISTS ${index} ON ${name} (expires_at);`,
    '',
  ].join('\n');
}

/** The migration behind an advisory lock: CREATE ... IF NOT EXISTS races when two instances start at once. */
export function lockedMigration(table: string): string {
  quotedTable(table);
  return `SELECT pg_advisory_xact_lock(hashtext('jobhook:${table}'));\n${postgresDedupeMigration(table)}`;
}
