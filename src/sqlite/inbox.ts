import { JobhookError } from '../common/errors.js';
import { optionNames, refuseUnknownOptions } from '../common/option-checks.js';
import { inboxRow, type Inbox, type InboxDelivery, type InboxSettlement } from '../inbox/inbox.js';
import { inboxLimits, type InboxLimits, type InboxOptions } from '../inbox/options.js';
import { checkIds, filterClause, INBOX_COLUMNS, storedDelivery, type InboxRow } from '../inbox/rows.js';
import {
  flushCommits,
  immediate,
  openDatabase,
  openJournal,
  sqliteTable,
  type SqliteDatabase,
} from './database.js';

const WHERE = 'sqliteInbox';

/** Options of {@link sqliteInbox}. */
export interface SqliteInboxOptions extends InboxOptions {
  /** The database file, e.g. `'./jobhook.db'`: created if absent; the dedupe store and tracker may share it. */
  path: string;
  /** The table's name. Default `jobhook_inbox`. */
  table?: string;
}

/** The SQLite inbox: its options, resolved. */
export interface SqliteInbox extends Inbox {
  readonly path: string;
  readonly table: string;
}

/** Refused deliveries stored between two trims of the quarantine: its bounds are kept within this many. */
const TRIM_EVERY = 64;

const OPTIONS = optionNames<SqliteInboxOptions>()([
  'path',
  'table',
  'retainMs',
  'maxBytes',
  'quarantine',
  'leaseMs',
  'retry',
]);

interface Write {
  delivery: InboxDelivery;
  reason: string | null;
  resolve: (id: string) => void;
  reject: (error: Error) => void;
}

/**
 * An {@link Inbox} in a SQLite file, shared by the processes of one machine. The deliveries that
 * arrive together are written in one transaction and flushed once, off the event loop, before any
 * is answered; those that arrive during a flush wait for the next, together.
 */
export function sqliteInbox(options: SqliteInboxOptions): SqliteInbox {
  refuseUnknownOptions(options, OPTIONS, WHERE);
  const table = sqliteTable(WHERE, options?.table, 'jobhook_inbox');
  const limits = inboxLimits(WHERE, options);
  const db = openDatabase(options.path, WHERE);
  const sql = statements(db, table);
  try {
    openJournal(db);
  } catch {
    // A file this process may only read (`jobhook inbox list`): a failed flush is then a 503.
  }

  let writes: Write[] = [];
  let writing = false;
  let refusedSinceTrim = TRIM_EVERY;

  function write(delivery: InboxDelivery, reason: string | null): Promise<string> {
    return new Promise((resolve, reject) => {
      writes.push({ delivery, reason, resolve, reject });
      if (writing) return;
      writing = true;
      setImmediate(() => void writeAll());
    });
  }

  /** Writes what waits, batch after batch, until nothing does. */
  async function writeAll() {
    while (writes.length > 0) {
      const batch = writes;
      writes = [];
      await writeBatch(batch);
    }
    writing = false;
  }

  async function writeBatch(batch: Write[]) {
    let ids: string[];
    try {
      ids = immediate(db, () => {
        const now = Date.now();
        const made = batch.map(({ delivery, reason }) => insert(delivery, reason, now));
        if (batch.some((each) => each.reason !== null) && (refusedSinceTrim += batch.length) >= TRIM_EVERY) {
          refusedSinceTrim = 0;
          trim(sql, limits);
        }
        return made;
      });
    } catch (error) {
      const failure = failed('store deliveries', error);
      for (const each of batch) each.reject(failure);
      return;
    }
    const stored = ids.filter((_, at) => batch[at]!.reason === null);
    if (stored.length > 0) {
      try {
        // The commit is in the page cache (synchronous=NORMAL): no 2xx before this puts it on disk.
        await flushCommits(db);
      } catch (error) {
        forget(stored);
        const failure = failed('flush deliveries to disk', error);
        batch.forEach((each, at) => (each.reason === null ? each.reject(failure) : each.resolve(ids[at]!)));
        return;
      }
    }
    batch.forEach((each, at) => each.resolve(ids[at]!));
  }

  /** Deletes stored deliveries whose flush failed (answered 503, so sent again), unless one runs already. */
  function forget(ids: readonly string[]) {
    try {
      immediate(db, () => {
        for (const id of ids) sql.forget.run(Number(id));
      });
    } catch {
      // Left pending: it runs, and the sender's retry of it is a duplicate to the dedupe store.
    }
  }

  function insert(delivery: InboxDelivery, reason: string | null, now: number): string {
    const row = inboxRow(delivery);
    const { id } = sql.insert.get({
      ...row,
      status: reason === null ? 'pending' : 'refused',
      body: delivery.body,
      size: delivery.body.byteLength + row.headers.length,
      receivedAt: Math.floor(delivery.receivedAt),
      reason,
      dueAt: now,
      settledAt: reason === null ? null : now,
    }) as { id: number };
    return String(id);
  }

  /** One step, its failure (SQLITE_FULL, BUSY, READONLY…) an `inbox_failed` rejection. */
  function step<T>(what: string, run: () => T): Promise<T> {
    try {
      return Promise.resolve(run());
    } catch (error) {
      return Promise.reject(failed(what, error));
    }
  }

  return {
    path: db.name,
    table,
    leaseMs: limits.leaseMs,
    retry: limits.retry,
    store: (delivery) => write(delivery, null),
    async quarantine(delivery, reason) {
      await write(delivery, reason);
    },
    lease: (owner, limit) =>
      step('lease deliveries', () => {
        const now = Date.now();
        const rows = sql.lease.all({ owner, until: now + limits.leaseMs, now, limit }) as InboxRow[];
        return rows.map(storedDelivery).sort((a, b) => Number(a.id) - Number(b.id));
      }),
    settle: (id, settlement: InboxSettlement, owner) =>
      step('settle a delivery', () => {
        const pending = settlement.status === 'pending';
        const { changes } = sql.settle.run({
          id: Number(id),
          status: settlement.status,
          attempts: settlement.attempts,
          reason: settlement.status === 'handled' ? null : (settlement.reason ?? null),
          dueAt: pending ? settlement.dueAt : Date.now(),
          settledAt: pending ? null : Date.now(),
          owner: owner ?? null,
        });
        return changes > 0;
      }),
    list: (filter) =>
      step('list deliveries', () => {
        const { where, values, limit } = filterClause('inbox.list', filter, () => '?');
        const text = `SELECT ${INBOX_COLUMNS} FROM "${table}" ${where} ORDER BY id LIMIT ${limit}`;
        return (db.prepare(text).all(...values) as InboxRow[]).map(storedDelivery);
      }),
    requeue: (ids, mark) =>
      step('mark deliveries for replay', () => {
        checkIds('inbox.requeue', ids);
        const now = Date.now();
        const replay = mark === 'force' ? 'force' : 'replay';
        return immediate(db, () =>
          ids.reduce(
            (marked, id) => marked + sql.requeue.run({ id: Number(id), mark: replay, now }).changes,
            0,
          ),
        );
      }),
    prune: () =>
      step('prune', () =>
        immediate(db, () => {
          sql.expire.run(Date.now() - limits.retainMs);
          sql.cap.run(limits.maxBytes);
          trim(sql, limits);
        }),
      ),
  };
}

function failed(what: string, error: unknown): JobhookError {
  return new JobhookError('inbox_failed', `The inbox failed to ${what}: ${String(error)}`, { cause: error });
}

function trim(sql: ReturnType<typeof statements>, limits: InboxLimits) {
  sql.trim.run(limits.quarantineCount, limits.quarantineBytes);
}

/** The table (created if absent) and the inbox's statements on it. */
function statements(db: SqliteDatabase, table: string) {
  db.exec(`CREATE TABLE IF NOT EXISTS "${table}" (
      id INTEGER PRIMARY KEY AUTOINCREMENT,
      status TEXT NOT NULL,
      body BLOB NOT NULL,
      size INTEGER NOT NULL,
      headers TEXT NOT NULL,
      url TEXT,
      tenant TEXT,
      type TEXT,
      delivery_id TEXT,
      received_at INTEGER NOT NULL,
      reason TEXT,
      attempts INTEGER NOT NULL DEFAULT 0,
      due_at INTEGER NOT NULL,
      lease_owner TEXT,
      lease_until INTEGER,
      settled_at INTEGER,
      replay TEXT
    );
    CREATE INDEX IF NOT EXISTS "${table}_pending" ON "${table}" (due_at) WHERE status = 'pending';
    CREATE INDEX IF NOT EXISTS "${table}_status" ON "${table}" (status, id);
    CREATE INDEX IF NOT EXISTS "${table}_received" ON "${table}" (received_at);`);
  const name = `"${table}"`;
  return {
    insert: db.prepare(`INSERT INTO ${name}
      (status, body, size, headers, url, tenant, type, delivery_id, received_at, reason, due_at, settled_at)
      VALUES (@status, @body, @size, @headers, @url, @tenant, @type, @deliveryId, @receivedAt, @reason,
        @dueAt, @settledAt)
      RETURNING id`),
    lease: db.prepare(`UPDATE ${name} SET lease_owner = @owner, lease_until = @until WHERE id IN (
        SELECT id FROM ${name} WHERE status = 'pending' AND due_at <= @now
          AND (lease_until IS NULL OR lease_until <= @now)
        ORDER BY id LIMIT @limit)
      RETURNING ${INBOX_COLUMNS}`),
    settle: db.prepare(`UPDATE ${name} SET status = @status, attempts = @attempts, reason = @reason,
        due_at = @dueAt, settled_at = @settledAt, lease_owner = NULL, lease_until = NULL, replay = NULL
      WHERE id = @id AND (@owner IS NULL OR (lease_owner = @owner AND status = 'pending'))`),
    forget: db.prepare(`DELETE FROM ${name} WHERE id = ? AND status = 'pending' AND lease_owner IS NULL`),
    requeue: db.prepare(`UPDATE ${name} SET status = 'pending', replay = @mark, due_at = @now,
        lease_owner = NULL, lease_until = NULL WHERE id = @id AND status <> 'pending'`),
    trim: db.prepare(`DELETE FROM ${name} WHERE id IN (
        SELECT id FROM (SELECT id, row_number() OVER w AS n, sum(size) OVER w AS total
          FROM ${name} WHERE status = 'refused' WINDOW w AS (ORDER BY id DESC))
        WHERE n > ? OR total > ?)`),
    expire: db.prepare(`DELETE FROM ${name} WHERE status <> 'pending' AND settled_at < ?`),
    cap: db.prepare(`DELETE FROM ${name} WHERE id IN (
        SELECT id FROM (SELECT id, sum(size) OVER (ORDER BY id DESC) AS total
          FROM ${name} WHERE status IN ('handled', 'failed'))
        WHERE total > ?)`),
  };
}
