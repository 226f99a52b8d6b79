import { bounded } from '../common/deadline.js';
import {
  checkOption,
  MS_OR_NONE,
  optionNames,
  refuseUnknownOptions,
  wholeNumber,
} from '../common/option-checks.js';
import { inboxRow, type Inbox, type InboxDelivery, type InboxSettlement } from '../inbox/inbox.js';
import { inboxLimits, type InboxOptions } from '../inbox/options.js';
import { checkIds, filterClause, INBOX_COLUMNS, storedDelivery, type InboxRow } from '../inbox/rows.js';
import { PG_POOL, quotedTable, type PostgresQueryable } from './dedupe-store.js';

/** Options of {@link postgresInbox}. */
export interface PostgresInboxOptions extends InboxOptions {
  /** A `pg` Pool; the inbox never ends it. */
  pool: PostgresQueryable;
  /** `name` or `schema.name`. Default `jobhook_inbox`. */
  table?: string;
  /** Create the table on first use. Default `true`; `false` if you run {@link postgresInboxMigration}. */
  createTable?: boolean;
  /** Longest wait for one query, in ms, before the delivery is answered 503. Default 5,000; 0: the pool's. */
  timeoutMs?: number;
}

/** The PostgreSQL inbox: its options, resolved. */
export interface PostgresInbox extends Inbox {
  readonly table: string;
}

const WHERE = 'postgresInbox';
const DEFAULT_TABLE = 'jobhook_inbox';
/** Refused deliveries stored between two trims of the quarantine: its bounds are kept within this many. */
const TRIM_EVERY = 64;

/** Deliveries stored by one statement at most, and their bodies' bytes (one alone may pass it). */
const BATCH_ROWS = 200;
const BATCH_BYTES = 8 * 1024 * 1024;
const COLUMN_COUNT = Array.from({ length: 12 }, (_, at) => at + 1);

interface Store {
  values: unknown[];
  size: number;
  resolve: (id: string) => void;
  reject: (error: Error) => void;
}

const OPTIONS = optionNames<PostgresInboxOptions>()([
  'pool',
  'table',
  'createTable',
  'timeoutMs',
  'retainMs',
  'maxBytes',
  'quarantine',
  'leaseMs',
  'retry',
]);

/** The SQL that creates the inbox's table, for your own migrations (`createTable: false`); safe to rerun. */
export function postgresInboxMigration(table: string = DEFAULT_TABLE): string {
  const name = quotedTable(table, 'postgresInboxMigration');
  const base = table.split('.').pop()!.slice(0, 48);
  return [
    `CREATE TABLE IF NOT EXISTS ${name} (`,
    `  id bigserial PRIMARY KEY,`,
    `  status text NOT NULL,`,
    `  body bytea NOT NULL,`,
    `  size integer NOT NULL,`,
    `  headers text NOT NULL,`,
    `  url text,`,
    `  tenant text,`,
    `  type text,`,
    `  delivery_id text,`,
    `  received_at bigint NOT NULL,`,
    `  reason text,`,
    `  attempts integer NOT NULL DEFAULT 0,`,
    `  due_at bigint NOT NULL,`,
    `  lease_owner text,`,
    `  lease_until bigint,`,
    `  settled_at bigint,`,
    `  replay text`,
    `);`,
    `CREATE INDEX IF NOT EXISTS "${base}_pending_idx" ON ${name} (due_at) WHERE status = 'pending';`,
    `CREATE INDEX IF NOT EXISTS "${base}_status_idx" ON ${name} (status, id);`,
    `CREATE INDEX IF NOT EXISTS "${base}_received_idx" ON ${name} (received_at);`,
    '',
  ].join('\n');
}

/**
 * An {@link Inbox} in a PostgreSQL table: every instance of the app stores into it and leases from
 * it (`FOR UPDATE SKIP LOCKED`), so each stored delivery runs in one of them at a time.
 */
export function postgresInbox(options: PostgresInboxOptions): PostgresInbox {
  refuseUnknownOptions(options, OPTIONS, WHERE);
  const pool = options?.pool;
  checkOption(WHERE, 'pool', pool, typeof pool?.query === 'function', PG_POOL);
  const table = options.table ?? DEFAULT_TABLE;
  const name = quotedTable(table, WHERE);
  const limits = inboxLimits(WHERE, options);
  const timeoutMs = wholeNumber(WHERE, 'timeoutMs', options.timeoutMs, 5000, { min: 0, unit: MS_OR_NONE });

  const columns = `INSERT INTO ${name}
      (status, body, size, headers, url, tenant, type, delivery_id, received_at, reason, due_at, settled_at)`;
  const insert = `${columns} VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12) RETURNING id`;
  const sql = {
    lease: `UPDATE ${name} SET lease_owner = $1, lease_until = $2 WHERE id IN (
        SELECT id FROM ${name} WHERE status = 'pending' AND due_at <= $3
          AND (lease_until IS NULL OR lease_until <= $3)
        ORDER BY id LIMIT $4 FOR UPDATE SKIP LOCKED)
      RETURNING ${INBOX_COLUMNS}`,
    settle: `UPDATE ${name} SET status = $2, attempts = $3, reason = $4, due_at = $5, settled_at = $6,
        lease_owner = NULL, lease_until = NULL, replay = NULL
      WHERE id = $1 AND ($7::text IS NULL OR (lease_owner = $7 AND status = 'pending')) RETURNING 1`,
    requeue: `UPDATE ${name} SET status = 'pending', replay = $2, due_at = $3, lease_owner = NULL,
        lease_until = NULL WHERE id = ANY($1::bigint[]) AND status <> 'pending' RETURNING 1`,
    trim: `DELETE FROM ${name} WHERE id IN (
        SELECT id FROM (SELECT id, row_number() OVER w AS n, sum(size) OVER w AS total
          FROM ${name} WHERE status = 'refused' WINDOW w AS (ORDER BY id DESC)) r
        WHERE n > $1 OR total > $2)`,
    expire: `DELETE FROM ${name} WHERE status <> 'pending' AND settled_at < $1`,
    cap: `DELETE FROM ${name} WHERE id IN (
        SELECT id FROM (SELECT id, sum(size) OVER (ORDER BY id DESC) AS total
          FROM ${name} WHERE status IN ('handled', 'failed')) r
        WHERE total > $1)`,
  };

  let ready: Promise<unknown> | undefined;
  function ensureTable(): Promise<unknown> | undefined {
    if (options.createTable === false) return undefined;
    if (!ready) {
      const migration = `SELECT pg_advisory_xact_lock(hashtext('jobhook:${table}'));\n${postgresInboxMigration(table)}`;
      ready = pool.query(migration);
      ready.catch(() => (ready = undefined));
    }
    return ready;
  }

  async function query(what: string, text: string, values: unknown[] = []) {
    const run = async () => {
      const made = ensureTable();
      if (made) await made;
      return (await pool.query(text, values)).rows;
    };
    return bounded(run(), timeoutMs, 'inbox_failed', `The inbox failed to ${what}`);
  }

  function insertValues(delivery: InboxDelivery, status: 'pending' | 'refused', reason: string | null) {
    const row = inboxRow(delivery);
    const now = Date.now();
    return [
      status,
      delivery.body,
      delivery.body.byteLength + row.headers.length,
      row.headers,
      row.url,
      row.tenant,
      row.type,
      row.deliveryId,
      Math.floor(delivery.receivedAt),
      reason,
      now,
      status === 'refused' ? now : null,
    ];
  }

  let waiting: Store[] = [];
  let storing = 0;

  /** One statement for the deliveries of one turn while others are stored; at once otherwise (no turn's wait). */
  function store(delivery: InboxDelivery): Promise<string> {
    const values = insertValues(delivery, 'pending', null);
    return new Promise((resolve, reject) => {
      if (waiting.length === 0) {
        if (storing === 0) queueMicrotask(storeWaiting);
        else setImmediate(storeWaiting);
      }
      waiting.push({ values, size: delivery.body.byteLength, resolve, reject });
    });
  }

  function storeWaiting() {
    const all = waiting;
    waiting = [];
    let from = 0;
    let bytes = 0;
    all.forEach((each, at) => {
      if (at > from && (at - from >= BATCH_ROWS || bytes + each.size > BATCH_BYTES)) {
        void storeBatch(all.slice(from, at));
        from = at;
        bytes = 0;
      }
      bytes += each.size;
    });
    void storeBatch(all.slice(from));
  }

  async function storeBatch(batch: Store[]) {
    storing++;
    const rows = batch.map((_, at) => `(${COLUMN_COUNT.map((n) => `$${at * 12 + n}`).join(', ')})`);
    try {
      const made = (await query(
        'store deliveries',
        `${columns} VALUES ${rows.join(', ')} RETURNING id`,
        batch.flatMap((each) => each.values),
      )) as { id: string }[];
      // RETURNING gives the rows in the order of VALUES (what ORMs' bulk inserts rely on too).
      batch.forEach((each, at) => each.resolve(String(made[at]!.id)));
    } catch (error) {
      for (const each of batch) each.reject(error as Error);
    } finally {
      storing--;
    }
  }

  let refusedSinceTrim = TRIM_EVERY;
  return {
    table,
    leaseMs: limits.leaseMs,
    retry: limits.retry,
    store: async (delivery) => store(delivery),
    async quarantine(delivery, reason) {
      await query('keep a refused delivery', insert, insertValues(delivery, 'refused', reason));
      if (++refusedSinceTrim < TRIM_EVERY) return;
      refusedSinceTrim = 0;
      await query('trim the quarantine', sql.trim, [limits.quarantineCount, limits.quarantineBytes]);
    },
    async lease(owner, limit) {
      const now = Date.now();
      const rows = (await query('lease deliveries', sql.lease, [
        owner,
        now + limits.leaseMs,
        now,
        limit,
      ])) as InboxRow[];
      return rows.map(storedDelivery).sort((a, b) => Number(a.id) - Number(b.id));
    },
    async settle(id, settlement: InboxSettlement, owner) {
      const reason = settlement.status === 'handled' ? null : (settlement.reason ?? null);
      const dueAt = settlement.status === 'pending' ? settlement.dueAt : Date.now();
      const settledAt = settlement.status === 'pending' ? null : Date.now();
      const values = [id, settlement.status, settlement.attempts, reason, dueAt, settledAt, owner ?? null];
      return (await query('settle a delivery', sql.settle, values)).length > 0;
    },
    async list(filter) {
      const { where, values, limit } = filterClause('inbox.list', filter, (n) => `$${n}`);
      const text = `SELECT ${INBOX_COLUMNS} FROM ${name} ${where} ORDER BY id LIMIT ${limit}`;
      return ((await query('list deliveries', text, values)) as InboxRow[]).map(storedDelivery);
    },
    async requeue(ids, mark) {
      checkIds('inbox.requeue', ids);
      const values = [ids, mark === 'force' ? 'force' : 'replay', Date.now()];
      return (await query('mark deliveries for replay', sql.requeue, values)).length;
    },
    async prune() {
      await query('prune', sql.expire, [Date.now() - limits.retainMs]);
      await query('prune', sql.cap, [limits.maxBytes]);
      await query('trim the quarantine', sql.trim, [limits.quarantineCount, limits.quarantineBytes]);
    },
  };
}
