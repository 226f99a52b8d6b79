import {
  checkOption,
  MS_OR_NONE,
  optionNames,
  positiveInteger,
  refuseUnknownOptions,
  wholeNumber,
} from '../common/errors.js';
import type { ClaimResult, DedupeStore } from '../dedupe/dedupe-store.js';
import { bounded } from '../common/deadline.js';
import { DEFAULT_TABLE, lockedMigration, PG_POOL, quotedTable } from './table.js';

const WHERE = 'postgresDedupeStore';

/**
 * The part of a `pg` Pool (or Client) the store uses. Typed here rather than imported, so that
 * `jobhook/postgres` loads without pg until you create the pool yourself.
 */
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
  /**
   * How long a handled event is remembered, in ms. Default 72 hours. It must outlast the sender's
   * retry window: a delivery retried after it runs its handlers again.
   */
  ttlMs?: number;
  /**
   * Create the table (and its index) on first use. Default `true`; pass `false` when your own
   * migrations run {@link postgresDedupeMigration}.
   */
  createTable?: boolean;
  /**
   * Delete forgotten rows (past their retention or lease), at most 1,000 at a time, at most once
   * per this many ms per store, after a `complete`. Default 60,000; 0 turns it off (then run
   * `DELETE FROM <table> WHERE expires_at < now()` yourself from time to time).
   */
  cleanupIntervalMs?: number;
  /**
   * Longest wait for one query, in ms, before it rejects (the delivery then answers 500 and the
   * sender retries). Default 5,000; 0 leaves it to the pool's own settings.
   */
  timeoutMs?: number;
}

/** The Postgres store: its options, resolved. */
export interface PostgresDedupeStore extends DedupeStore {
  /** The table in use, as given. */
  readonly table: string;
  /** How long a handled event is remembered, in ms. */
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

/**
 * A {@link DedupeStore} in a PostgreSQL table, shared by every instance that reaches the database.
 * Each call is one statement (one round trip); the first call also creates the table unless
 * `createTable: false`. Claims are `INSERT ... ON CONFLICT DO UPDATE ... WHERE` the row expired,
 * so of concurrent claims exactly one inserts or takes over the row.
 */
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
    // The CTE's SELECT sees the row as it was before this statement: when the claim lost, that
    // row tells `done` from `busy`. A row that appeared concurrently is not visible to it, and
    // reads as `busy` (a claim indeed), so the sender retries.
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
      // A failed attempt (database down) is tried again by the next call.
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
    // Housekeeping only: a failure changes nothing the contract promises, the next one retries.
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
