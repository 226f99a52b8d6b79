import { existsSync } from 'node:fs';
import { sleep, type Inbox, type InboxFilter, type InboxStatus, type StoredDelivery } from 'jobhook/extend';
import { CommandError, UsageError, env, integer, jsonText, out, parse, tableLines } from './args.js';
import { inboxHelp, inboxListHelp, inboxReplayHelp, inboxShowHelp } from './help.js';

const options = {
  db: { type: 'string' },
  'database-url': { type: 'string' },
  table: { type: 'string' },
  status: { type: 'string' },
  tenant: { type: 'string' },
  type: { type: 'string' },
  since: { type: 'string' },
  until: { type: 'string' },
  limit: { type: 'string' },
  force: { type: 'boolean' },
  wait: { type: 'string' },
  json: { type: 'boolean' },
  help: { type: 'boolean', short: 'h' },
} as const;

type Values = ReturnType<typeof parse<typeof options>>['values'];

const SUBCOMMANDS = { list, show, replay } as const;
const HELP = { list: inboxListHelp, show: inboxShowHelp, replay: inboxReplayHelp } as const;

/** `jobhook inbox list|show|replay`: the deliveries an inbox kept, on SQLite (--db) or PostgreSQL. */
export async function inbox(args: string[]): Promise<number> {
  const [sub, ...rest] = args;
  if (sub === undefined) {
    process.stderr.write(inboxHelp);
    return 2;
  }
  if (sub === '-h' || sub === '--help' || sub === 'help') {
    process.stdout.write(inboxHelp);
    return 0;
  }
  if (!Object.hasOwn(SUBCOMMANDS, sub)) throw new UsageError(`unknown command "inbox ${sub}"`, 'inbox');
  const name = sub as keyof typeof SUBCOMMANDS;
  try {
    const { values, positionals } = parse(rest, options);
    if (values.help) {
      process.stdout.write(HELP[name]);
      return 0;
    }
    return await SUBCOMMANDS[name](values, positionals);
  } catch (error) {
    if (error instanceof UsageError) error.command ??= `inbox ${name}`;
    throw error;
  }
}

async function list(values: Values, positionals: string[]): Promise<number> {
  if (positionals.length > 0) throw new UsageError(`unexpected argument ${JSON.stringify(positionals[0])}`);
  const filter = filterOf(values, 100);
  const rows = await withInbox(values, (opened) => opened.list(filter));
  if (values.json) out(jsonText(rows.map(summary)));
  else printTable(rows);
  return 0;
}

async function show(values: Values, positionals: string[]): Promise<number> {
  const [id, ...extra] = positionals;
  if (id === undefined || extra.length > 0) throw new UsageError('inbox show takes one delivery id');
  const [row] = await withInbox(values, (opened) => opened.list({ ids: [checkedId(id)] }));
  if (!row) throw new CommandError(`no delivery ${JSON.stringify(id)} in this inbox`);
  const body = bodyText(row.body);
  if (values.json) {
    out(jsonText({ ...summary(row), headers: row.headers, url: row.url, ...body }));
    return 0;
  }
  for (const [label, value] of Object.entries(summary(row))) out(`${label}: ${value ?? '-'}`);
  out(`url: ${row.url ?? '-'}`);
  out('headers:');
  for (const [name, value] of Object.entries(row.headers)) out(`  ${name}: ${value}`);
  out(body.base64 !== undefined ? `body (base64): ${body.base64}` : `body: ${body.text}`);
  return 0;
}

/**
 * Marks the deliveries picked for replay; the running app, which has the handlers, runs them
 * (verified again, `context.source === 'replay'`). With --wait, waits that long for it to and
 * prints what became of each.
 */
async function replay(values: Values, positionals: string[]): Promise<number> {
  const ids = positionals.map(checkedId);
  if (ids.length === 0 && values.status === undefined && values.since === undefined) {
    throw new UsageError('inbox replay needs delivery ids, or --status or --since to pick them');
  }
  const filter = filterOf(values, 1000);
  if (filter.status === 'pending') throw new UsageError('--status pending: those run by themselves');
  const waitS = values.wait === undefined ? 0 : integer(values.wait, '--wait')!;
  return withInbox(values, async (opened) => {
    const picked = (await opened.list(ids.length > 0 ? { ...filter, ids } : filter)).filter(
      (row) => row.status !== 'pending',
    );
    const marked = await opened.requeue(
      picked.map((row) => row.id),
      values.force ? 'force' : 'replay',
    );
    if (!values.json) out(`Marked ${marked} deliver${marked === 1 ? 'y' : 'ies'} for replay.`);
    if (waitS <= 0) {
      if (values.json) out(jsonText({ marked }));
      else if (marked > 0)
        out('The app running on this inbox runs them; `jobhook inbox list` shows how they end.');
      return 0;
    }
    const ended = await settled(
      opened,
      picked.map((row) => row.id),
      waitS,
    );
    if (values.json) out(jsonText(ended.map(summary)));
    else printTable(ended);
    return ended.some((row) => row.status === 'pending') ? 1 : 0;
  });
}

/** Reads the rows again until none is pending, at most `seconds`. */
async function settled(opened: Inbox, ids: string[], seconds: number): Promise<StoredDelivery[]> {
  const until = Date.now() + seconds * 1000;
  for (;;) {
    const rows = ids.length === 0 ? [] : await opened.list({ ids, limit: ids.length });
    if (rows.every((row) => row.status !== 'pending') || Date.now() >= until) return rows;
    await sleep(250);
  }
}

const STATUSES: readonly InboxStatus[] = ['pending', 'handled', 'failed', 'refused'];

function filterOf(values: Values, limit: number): InboxFilter {
  const filter: InboxFilter = { limit: integer(values.limit, '--limit') ?? limit };
  if (values.status !== undefined) {
    if (!(STATUSES as readonly string[]).includes(values.status)) {
      throw new UsageError(`--status must be one of ${STATUSES.join(', ')}`);
    }
    filter.status = values.status as InboxStatus;
  }
  if (values.tenant !== undefined) filter.tenant = values.tenant;
  if (values.type !== undefined) filter.type = values.type;
  if (values.since !== undefined) filter.since = time(values.since, '--since');
  if (values.until !== undefined) filter.until = time(values.until, '--until');
  return filter;
}

function time(value: string, what: string): number {
  const ms = /^\d+$/.test(value) ? Number(value) : Date.parse(value);
  if (!Number.isFinite(ms))
    throw new UsageError(`${what} must be a date (2026-11-30T03:00:00Z) or ms since the epoch`);
  return ms;
}

function checkedId(id: string): string {
  if (!/^\d{1,19}$/.test(id)) throw new UsageError(`${JSON.stringify(id)} is not a delivery id (digits)`);
  return id;
}

function summary(row: StoredDelivery) {
  return {
    id: row.id,
    status: row.status,
    receivedAt: new Date(row.receivedAt).toISOString(),
    type: row.type,
    deliveryId: row.deliveryId,
    tenant: row.tenant,
    attempts: row.attempts,
    reason: row.reason,
  };
}

function printTable(rows: StoredDelivery[]): void {
  if (rows.length === 0) {
    out('No deliveries.');
    return;
  }
  const lines = [
    ['ID', 'STATUS', 'RECEIVED', 'TYPE', 'DELIVERY', 'ATTEMPTS', 'REASON'],
    ...rows.map((row) => [
      row.id,
      row.status,
      new Date(row.receivedAt).toISOString(),
      row.type ?? '-',
      row.deliveryId ?? '-',
      String(row.attempts),
      row.reason ?? '-',
    ]),
  ];
  for (const line of tableLines(lines)) out(line);
}

/** The body as text when it is UTF-8, else as base64. */
function bodyText(body: Uint8Array): { text?: string; base64?: string } {
  try {
    return { text: new TextDecoder('utf-8', { fatal: true }).decode(body) };
  } catch {
    return { base64: Buffer.from(body).toString('base64') };
  }
}

/** Opens the inbox the options name (--db or --database-url), runs `use`, and closes what it opened. */
async function withInbox<T>(values: Values, use: (opened: Inbox) => Promise<T>): Promise<T> {
  const url = values['database-url'] ?? env('JOBHOOK_DATABASE_URL');
  if ((values.db === undefined) === (url === undefined)) {
    throw new UsageError('inbox needs one of --db <path> (SQLite) and --database-url <url> (PostgreSQL)');
  }
  const table = values.table === undefined ? {} : { table: values.table };
  if (values.db !== undefined) {
    // A mistyped path must not make a new, empty database.
    if (!existsSync(values.db)) throw new CommandError(`no database at ${values.db}`);
    const { sqliteInbox } = await import('jobhook/sqlite');
    return use(sqliteInbox({ path: values.db, ...table }));
  }
  const pg = await import('pg').catch(() => {
    throw new CommandError('--database-url needs the pg package: npm install pg');
  });
  const { postgresInbox } = await import('jobhook/postgres');
  const pool = new pg.default.Pool({ connectionString: url, max: 2 });
  pool.on('error', () => undefined);
  try {
    return await use(postgresInbox({ pool, createTable: false, ...table }));
  } finally {
    await pool.end().catch(() => undefined);
  }
}
