import { closeSync, fdatasync, fstatSync, openSync, statSync } from 'node:fs';
import { createRequire } from 'node:module';
import { resolve } from 'node:path';
import { JobhookError, type JobhookErrorCode } from '../common/errors.js';
import { checkOption } from '../common/option-checks.js';

/** A prepared statement of better-sqlite3 (typed here, so that it stays an optional peer). */
export interface SqliteStatement {
  run(...params: unknown[]): { changes: number };
  get(...params: unknown[]): unknown;
  all(...params: unknown[]): unknown[];
}

/** A better-sqlite3 `Database`: `name` is the file's absolute path; `exec` runs SQL text with no parameters. */
export interface SqliteDatabase {
  readonly name: string;
  exec(sql: string): unknown;
  prepare(sql: string): SqliteStatement;
  readonly inTransaction: boolean;
}

/** How long a write waits for another process's to end before it fails with SQLITE_BUSY. */
export const BUSY_TIMEOUT_MS = 5000;

type DatabaseConstructor = new (path: string, options?: { timeout?: number }) => SqliteDatabase;

const INSTALL = 'jobhook/sqlite needs the better-sqlite3 package: run `npm install better-sqlite3`.';

let engine: DatabaseConstructor | undefined;

/** better-sqlite3, loaded on first use, so that jobhook/sqlite loads without it. */
function loadEngine(): DatabaseConstructor {
  if (engine) return engine;
  try {
    engine = createRequire(import.meta.url)('better-sqlite3') as DatabaseConstructor;
  } catch (error) {
    const missing = (error as { code?: unknown }).code === 'MODULE_NOT_FOUND';
    throw new JobhookError('invalid_options', missing ? INSTALL : `${INSTALL} (${String(error)})`, {
      cause: error,
    });
  }
  return engine;
}

/** Why `file` did not open: a better-sqlite3 built for another Node says how to rebuild it. */
function cannotOpen(file: string, error: unknown): string {
  const text = String(error);
  if (/bindings file|NODE_MODULE_VERSION|ERR_DLOPEN_FAILED/.test(text + (error as { code?: string }).code)) {
    return `better-sqlite3 is not built for this Node (${process.version}): run \`npm rebuild better-sqlite3\` (${text})`;
  }
  return `cannot open the database ${file}: ${text}`;
}

const open = new Map<string, SqliteDatabase>();

/**
 * The connection to the file at `path` (created if absent), one per file in this process, shared by
 * its stores, tracker and inbox: WAL, a busy timeout, and `synchronous=NORMAL` (a commit survives a
 * crash at once, a power cut once flushed: the inbox's {@link flushCommits}, or a checkpoint).
 */
export function openDatabase(path: string | undefined, where = 'jobhook/sqlite'): SqliteDatabase {
  const file = typeof path === 'string' && path !== '' && path !== ':memory:';
  checkOption(where, 'path', path, file, "the path of a database file, e.g. './jobhook.db'");
  const absolute = resolve(path as string);
  const known = open.get(absolute);
  if (known) return known;
  const Database = loadEngine();
  let db: SqliteDatabase;
  try {
    db = new Database(absolute, { timeout: BUSY_TIMEOUT_MS });
    db.exec(`PRAGMA busy_timeout = ${BUSY_TIMEOUT_MS}`);
    db.exec('PRAGMA journal_mode = WAL');
    db.exec('PRAGMA synchronous = NORMAL');
  } catch (error) {
    throw new JobhookError('invalid_options', `${where}: ${cannotOpen(absolute, error)}`, { cause: error });
  }
  open.set(absolute, db);
  return db;
}

const transactions = new WeakMap<
  SqliteDatabase,
  { begin: SqliteStatement; commit: SqliteStatement; rollback: SqliteStatement }
>();

/**
 * Runs `work` (synchronous) in a `BEGIN IMMEDIATE` transaction: the write lock is taken first, so
 * two processes never both read a row and then both write it. Rolled back if `work` throws.
 */
export function immediate<T>(db: SqliteDatabase, work: () => T): T {
  let statements = transactions.get(db);
  if (!statements) {
    statements = {
      begin: db.prepare('BEGIN IMMEDIATE'),
      commit: db.prepare('COMMIT'),
      rollback: db.prepare('ROLLBACK'),
    };
    transactions.set(db, statements);
  }
  statements.begin.run();
  try {
    const result = work();
    statements.commit.run();
    return result;
  } catch (error) {
    if (db.inTransaction) statements.rollback.run();
    throw error;
  }
}

/** Runs `work` with `synchronous=FULL`: its commit is on disk when it returns (the event loop waits). */
export function fullySynced<T>(db: SqliteDatabase, work: () => T): T {
  db.exec('PRAGMA synchronous = FULL');
  try {
    return work();
  } finally {
    db.exec('PRAGMA synchronous = NORMAL');
  }
}

const IDENTIFIER = /^[A-Za-z_][A-Za-z0-9_]{0,62}$/;

/** `table` (or `fallback`), checked to be a plain identifier since it is written into SQL text. */
export function sqliteTable(where: string, table: unknown, fallback: string): string {
  const name = table ?? fallback;
  const rule = 'a name of letters, digits and _ (not starting with a digit, at most 63)';
  checkOption(where, 'table', name, typeof name === 'string' && IDENTIFIER.test(name), rule);
  return name as string;
}

/** Runs one store step, a failure of the database turned into a JobhookError that names the step. */
export function storeStep<T>(code: JobhookErrorCode, what: string, step: () => T): T {
  try {
    return step();
  } catch (error) {
    throw new JobhookError(code, `${what}: ${String(error)}`, { cause: error });
  }
}

/** A connection's `-wal` file; one flush at a time (a failed write-back is reported to one fsync only). */
interface Journal {
  fd: number | undefined;
  unsure: boolean;
  last: Promise<void>;
}

const journals = new WeakMap<SqliteDatabase, Journal>();

/**
 * Makes every commit so far on `db` durable off the event loop: an fdatasync of its `-wal` file (an
 * fsync flushes the file, whichever descriptor), and a checkpoint since the commit flushed the WAL
 * before copying it and the database after (wal.c), so the commit is on disk either way. After a
 * failed flush, later ones are not trusted (a failed write's blocks may stay unreadable, where
 * recovery stops) until the whole WAL is checkpointed into the flushed database file.
 */
export function flushCommits(db: SqliteDatabase): Promise<void> {
  const journal = journalOf(db);
  const flush = journal.last.then(() => flushNow(db, journal));
  journal.last = flush.catch(() => undefined);
  return flush;
}

async function flushNow(db: SqliteDatabase, journal: Journal): Promise<void> {
  const unsure = journal.unsure;
  if (unsure) {
    const result = db.prepare('PRAGMA wal_checkpoint(TRUNCATE)').get() as { busy: number } | undefined;
    if (result?.busy !== 0) throw new Error('after a failed flush, the WAL could not be checkpointed (busy)');
  }
  const fd = journalFd(db, journal);
  try {
    await new Promise<void>((done, fail) => fdatasync(fd, (error) => (error ? fail(error) : done())));
  } catch (error) {
    journal.unsure = true;
    throw error;
  }
  if (unsure) journal.unsure = false;
}

function journalOf(db: SqliteDatabase): Journal {
  let journal = journals.get(db);
  if (!journal) journals.set(db, (journal = { fd: undefined, unsure: false, last: Promise.resolve() }));
  return journal;
}

/** Opens `db`'s `-wal` file before the first flush: a failed write-back is reported to descriptors open then. */
export function openJournal(db: SqliteDatabase): void {
  journalFd(db, journalOf(db));
}

/** The `-wal` file's descriptor, opened again if the path names another file (it is not deleted while `db` is open). */
function journalFd(db: SqliteDatabase, journal: Journal): number {
  const path = `${db.name}-wal`;
  const now = statSync(path);
  if (journal.fd !== undefined) {
    const held = fstatSync(journal.fd);
    if (held.ino === now.ino && held.dev === now.dev) return journal.fd;
    closeQuietly(journal.fd);
    journal.fd = undefined;
  }
  journal.fd = openSync(path, 'r+');
  return journal.fd;
}

function closeQuietly(fd: number): void {
  try {
    closeSync(fd);
  } catch {
    /* nothing was written through it */
  }
}
