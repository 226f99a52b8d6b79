import { isRecord } from '../common/values.js';
import { checkOption, positiveInteger } from '../common/option-checks.js';
import { instant, type InboxFilter, type InboxStatus, type StoredDelivery } from './inbox.js';

/** A stored delivery as a SQL row (PostgreSQL's or SQLite's): the same columns in both. */
export interface InboxRow {
  id: string | number | bigint;
  status: string;
  body: Uint8Array;
  headers: string;
  url: string | null;
  tenant: string | null;
  type: string | null;
  delivery_id: string | null;
  received_at: string | number | bigint;
  reason: string | null;
  attempts: number | string | bigint;
  due_at: string | number | bigint;
  replay: string | null;
}

/** The columns of an inbox's table, in both engines (bigint ms for times, bytes for the body). */
export const INBOX_COLUMNS =
  'id, status, body, headers, url, tenant, type, delivery_id, received_at, reason, attempts, due_at, replay';

export function storedDelivery(row: InboxRow): StoredDelivery {
  let headers: unknown;
  try {
    headers = JSON.parse(row.headers);
  } catch {
    headers = {};
  }
  return {
    id: String(row.id),
    status: row.status as InboxStatus,
    body: row.body instanceof Uint8Array ? row.body : new Uint8Array(row.body),
    headers: isRecord(headers) ? (headers as Record<string, string>) : {},
    url: row.url ?? undefined,
    tenant: row.tenant ?? undefined,
    type: row.type ?? undefined,
    deliveryId: row.delivery_id ?? undefined,
    receivedAt: Number(row.received_at),
    reason: row.reason ?? undefined,
    attempts: Number(row.attempts),
    dueAt: Number(row.due_at),
    replay: row.replay === 'replay' || row.replay === 'force' ? row.replay : undefined,
  };
}

const STATUSES: readonly InboxStatus[] = ['pending', 'handled', 'failed', 'refused'];

/** Inbox ids, checked: they are written into SQL as parameters, and must be what the inbox gave. */
export function checkIds(where: string, ids: unknown): readonly string[] {
  const valid = Array.isArray(ids) && ids.every((id) => typeof id === 'string' && /^\d{1,19}$/.test(id));
  checkOption(where, 'ids', ids, valid, 'an array of inbox ids (strings of digits)');
  return ids as string[];
}

/** A filter's WHERE clause and values, with `at(n)` writing the engine's n-th placeholder. */
export function filterClause(where: string, filter: InboxFilter = {}, at: (n: number) => string) {
  const clauses: string[] = [];
  const values: unknown[] = [];
  const add = (sql: (p: string) => string, value: unknown) => {
    values.push(value);
    clauses.push(sql(at(values.length)));
  };
  const { ids, status, tenant, type } = filter;
  if (ids !== undefined) {
    checkIds(where, ids);
    if (ids.length === 0) clauses.push('1 = 0');
    else clauses.push(`id IN (${ids.map((id) => (values.push(id), at(values.length))).join(', ')})`);
  }
  const since = instant(filter.since);
  const until = instant(filter.until);
  if (since !== undefined) add((p) => `received_at >= ${p}`, checkedTime(where, 'since', since));
  if (until !== undefined) add((p) => `received_at < ${p}`, checkedTime(where, 'until', until));
  if (status !== undefined) {
    checkOption(where, 'status', status, STATUSES.includes(status), STATUSES.map((s) => `"${s}"`).join(', '));
    add((p) => `status = ${p}`, status);
  }
  if (tenant !== undefined) add((p) => `tenant = ${p}`, String(tenant));
  if (type !== undefined) add((p) => `type = ${p}`, String(type));
  const limit = positiveInteger(where, 'limit', filter.limit, 1000);
  return { where: clauses.length > 0 ? `WHERE ${clauses.join(' AND ')}` : '', values, limit };
}

function checkedTime(where: string, name: string, value: number): number {
  checkOption(where, name, value, Number.isFinite(value), 'a Date or ms since the epoch');
  return Math.floor(value);
}
