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
 * its stores, tracker and inbox: WAL (readers never wait for the writer), a busy timeout, and
 * `synchronous=NORMAL`: a commit survives the process's death at once (its frames are in the OS's
 * page cache) and a power cut once the `-wal` file is flushed, which the inbox does before its 2xx
 * ({@link flushCommits}) and SQLite does before each checkpoint; nothing else waits for the disk.
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

/**
 * Runs `work` (synchronous) with `synchronous=FULL`, so that its commit is on disk when it returns,
 * for the rare write that must survive a power cut and has no promise to wait on; the event loop
 * waits for the disk meanwhile.
 */
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

/**
 * The `-wal` file of one connection, open for flushing; `unsure` after a flush failed; `last`, the
 * flush under way: one runs at a time, since a failed write-back is reported to one fsync of a
 * descriptor only, and one running beside it would return success.
 */
interface Journal {
  fd: number | undefined;
  unsure: boolean;
  last: Promise<void>;
}

const journals = new WeakMap<SqliteDatabase, Journal>();

/**
 * Makes every commit made so far on `db` durable, without blocking the event loop: an fdatasync of
 * its `-wal` file on the libuv thread pool. An fsync flushes the file, whichever descriptor names
 * it, and a checkpoint that ran since the commit (and so a WAL restarted over its frames) flushed
 * the WAL before copying it and the database file after (SQLite's wal.c, walCheckpoint), so the
 * commit is on disk either way. The WAL is deleted only by the file's last connection to close,
 * never while `db` is open; the descriptor is opened again if the path names another file all the
 * same. After a failed flush, later ones are not trusted (the blocks of a failed write may stay
 * unreadable on disk, a hole before later frames, where recovery would stop) until a checkpoint has
 * copied the whole WAL into the database file, flushed it, and emptied the WAL.
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

/**
 * Opens `db`'s `-wal` file for {@link flushCommits} ahead of the first flush, so that a failed
 * write-back from then on is reported to it (Linux reports one to each descriptor open at the time).
 */
export function openJournal(db: SqliteDatabase): void {
  journalFd(db, journalOf(db));
}

/** The descriptor of `db`'s `-wal` file, opened once, and again if the path names another file. */
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
    // Already closed, or its file gone: nothing was written through it.
  }
}
