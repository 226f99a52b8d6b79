import {
  func,
  MS_OR_NONE,
  optionNames,
  positiveInteger,
  refuseUnknownOptions,
  wholeNumber,
} from '../common/option-checks.js';
import type { ClaimResult, DedupeStore } from '../dedupe/dedupe-store.js';
import { immediate, openDatabase, sqliteTable, storeStep, type SqliteDatabase } from './database.js';

const WHERE = 'sqliteDedupeStore';

/** Options of {@link sqliteDedupeStore}. */
export interface SqliteDedupeOptions {
  /** The database file, e.g. `'./jobhook.db'`: created if absent, shared by every process on this machine. */
  path: string;
  /** The table's name. Default `jobhook_deliveries`. */
  table?: string;
  /** How long a claim lives without renewal, in ms. Default 30,000. */
  leaseMs?: number;
  /** How long a handled event is remembered, in ms: longer than the sender retries. Default 72 hours. */
  ttlMs?: number;
  /** Delete up to 1,000 forgotten rows at most once per this many ms. Default 60,000; 0: never. */
  cleanupIntervalMs?: number;
  /** Clock in milliseconds, for tests. Default `Date.now`: the processes on one machine share it. */
  now?: () => number;
}

/** The SQLite store: its options, resolved. Its calls answer at once (better-sqlite3 is synchronous). */
export interface SqliteDedupeStore extends DedupeStore {
  readonly path: string;
  readonly table: string;
  readonly ttlMs: number;
  claim(key: string, owner: string): ClaimResult;
  renew(key: string, owner: string): boolean;
  complete(key: string, owner: string): void;
  release(key: string, owner: string): void;
}

const HOUR = 60 * 60 * 1000;

const SQLITE_DEDUPE_STORE_OPTIONS = optionNames<SqliteDedupeOptions>()([
  'path',
  'table',
  'leaseMs',
  'ttlMs',
  'cleanupIntervalMs',
  'now',
]);

/**
 * A {@link DedupeStore} in a SQLite file, shared by every process on the machine that opens it
 * (pm2, node:cluster): each claim is one `BEGIN IMMEDIATE` transaction, so exactly one process
 * gets `new`; times are the machine's clock, which those processes share.
 */
export function sqliteDedupeStore(options: SqliteDedupeOptions): SqliteDedupeStore {
  refuseUnknownOptions(options, SQLITE_DEDUPE_STORE_OPTIONS, WHERE);
  const table = sqliteTable(WHERE, options?.table, 'jobhook_deliveries');
  const leaseMs = positiveInteger(WHERE, 'leaseMs', options?.leaseMs, 30_000, 'ms');
  const ttlMs = positiveInteger(WHERE, 'ttlMs', options?.ttlMs, 72 * HOUR, 'ms');
  const cleanupIntervalMs = wholeNumber(WHERE, 'cleanupIntervalMs', options?.cleanupIntervalMs, 60_000, {
    min: 0,
    unit: MS_OR_NONE,
  });
  const now = func(WHERE, 'now', options?.now) ?? Date.now;
  const db = openDatabase(options?.path, WHERE);
  const sql = statements(db, table);
  const step = <T>(what: string, run: () => T) =>
    storeStep('dedupe_store_failed', `The dedupe store failed to ${what}`, run);

  let lastCleanup = now();
  function maybeCleanup(at: number) {
    if (cleanupIntervalMs === 0 || at - lastCleanup < cleanupIntervalMs) return;
    lastCleanup = at;
    try {
      sql.cleanup.run(at);
    } catch {
      // Forgotten rows stay until the next cleanup: they answer as absent meanwhile.
    }
  }

  return {
    path: db.name,
    table,
    leaseMs,
    ttlMs,
    claim(key, owner) {
      return step('claim', () =>
        immediate(db, (): ClaimResult => {
          const at = now();
          if (sql.claim.run({ key, owner, expires: at + leaseMs, now: at }).changes > 0) return 'new';
          const row = sql.holder.get(key) as { owner: string | null } | undefined;
          return row?.owner === null ? 'done' : 'busy';
        }),
      );
    },
    renew(key, owner) {
      return step('renew', () => {
        const at = now();
        return sql.renew.run({ key, owner, expires: at + leaseMs, now: at }).changes > 0;
      });
    },
    complete(key, owner) {
      const at = now();
      step('complete', () => sql.complete.run({ key, owner, expires: at + ttlMs, now: at }));
      maybeCleanup(at);
    },
    release(key, owner) {
      step('release', () => sql.release.run(key, owner));
    },
  };
}

/** The table (created if absent) and the store's statements on it; `owner` is NULL once handled. */
function statements(db: SqliteDatabase, table: string) {
  db.exec(`CREATE TABLE IF NOT EXISTS "${table}" (
      key TEXT PRIMARY KEY,
      owner TEXT,
      expires_at INTEGER NOT NULL
    ) WITHOUT ROWID;
    CREATE INDEX IF NOT EXISTS "${table}_expires_at" ON "${table}" (expires_at);`);
  return {
    claim: db.prepare(`INSERT INTO "${table}" (key, owner, expires_at) VALUES (@key, @owner, @expires)
      ON CONFLICT (key) DO UPDATE SET owner = excluded.owner, expires_at = excluded.expires_at
      WHERE expires_at <= @now`),
    holder: db.prepare(`SELECT owner FROM "${table}" WHERE key = ?`),
    renew: db.prepare(`UPDATE "${table}" SET expires_at = @expires
      WHERE key = @key AND owner = @owner AND expires_at > @now`),
    complete: db.prepare(`INSERT INTO "${table}" (key, owner, expires_at) VALUES (@key, NULL, @expires)
      ON CONFLICT (key) DO UPDATE SET owner = NULL, expires_at = excluded.expires_at
      WHERE owner = @owner OR expires_at <= @now`),
    release: db.prepare(`DELETE FROM "${table}" WHERE key = ? AND owner = ?`),
    cleanup: db.prepare(`DELETE FROM "${table}" WHERE key IN (
      SELECT key FROM "${table}" WHERE expires_at < ? LIMIT 1000)`),
  };
}
