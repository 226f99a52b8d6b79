import { messageOf } from 'jobhook/extend';
import type { FailedEvent, FailedEvents } from 'jobhook/extend';
import { CommandError, UsageError, env, integer, out, parse } from './args.js';
import { failedHelp, failedListHelp, failedRetryHelp } from './help.js';
import { jsonText, tableLines } from './args.js';

const options = {
  'redis-url': { type: 'string' },
  'database-url': { type: 'string' },
  'nats-url': { type: 'string' },
  queue: { type: 'string' },
  prefix: { type: 'string' },
  schema: { type: 'string' },
  stream: { type: 'string' },
  subject: { type: 'string' },
  limit: { type: 'string' },
  all: { type: 'boolean' },
  json: { type: 'boolean' },
  help: { type: 'boolean', short: 'h' },
} as const;

type Values = ReturnType<typeof parse<typeof options>>['values'];

/** `jobhook failed list|retry`: the events a hand-off kept as failed, on BullMQ, pg-boss or JetStream. */
export async function failed(args: string[]): Promise<number> {
  const [sub, ...rest] = args;
  if (sub === undefined) {
    process.stderr.write(failedHelp);
    return 2;
  }
  if (sub === '-h' || sub === '--help' || sub === 'help') return help(failedHelp);
  if (sub !== 'list' && sub !== 'retry') throw new UsageError(`unknown command "failed ${sub}"`, 'failed');
  try {
    const { values, positionals } = parse(rest, options);
    if (values.help) return help(sub === 'list' ? failedListHelp : failedRetryHelp);
    return sub === 'list' ? await list(values, positionals) : await retry(values, positionals);
  } catch (error) {
    if (error instanceof UsageError) error.command ??= `failed ${sub}`;
    throw error;
  }
}

async function list(values: Values, positionals: string[]): Promise<number> {
  if (positionals.length > 0) throw new UsageError(`unexpected argument ${JSON.stringify(positionals[0])}`);
  if (values.all) throw new UsageError('--all is for failed retry');
  const limit = integer(values.limit, '--limit') ?? 100;
  const events = await withEngine(values, (handoff) => handoff.listFailed({ limit: Math.max(1, limit) }));
  if (values.json) out(jsonText(events));
  else printTable(events);
  return 0;
}

async function retry(values: Values, positionals: string[]): Promise<number> {
  const [id, ...extra] = positionals;
  if (extra.length > 0) throw new UsageError(`unexpected argument ${JSON.stringify(extra[0])}`);
  if ((id === undefined) === !values.all) throw new UsageError('failed retry needs one event id, or --all');
  const limit = integer(values.limit, '--limit') ?? 1000;
  return withEngine(values, async (handoff) => {
    if (id !== undefined) {
      if (!(await handoff.retryFailed(id))) throw new CommandError(`no failed event ${JSON.stringify(id)}`);
      out(`Retried ${id}.`);
      return 0;
    }
    // One pass over the list as it is now: an event that fails again meanwhile waits for the next run.
    let retried = 0;
    for (const event of await handoff.listFailed({ limit: Math.max(1, limit) })) {
      if (await handoff.retryFailed(event.id)) retried++;
    }
    out(`Retried ${retried} failed event${retried === 1 ? '' : 's'}.`);
    return 0;
  });
}

function printTable(events: FailedEvent[]): void {
  if (events.length === 0) {
    out('No failed events.');
    return;
  }
  const rows = [
    ['ID', 'TYPE', 'EVENT', 'ATTEMPTS', 'FAILED AT', 'ERROR'],
    ...events.map((event) => [
      event.id,
      event.type,
      event.key ?? '-',
      String(event.attempts),
      event.failedAt === undefined ? '-' : new Date(event.failedAt).toISOString(),
      event.error || '-',
    ]),
  ];
  for (const line of tableLines(rows)) out(line);
}

/** Opens the hand-off the options name (exactly one engine), runs `use`, and closes it. */
async function withEngine<T>(values: Values, use: (handoff: FailedEvents) => Promise<T>): Promise<T> {
  const urls = {
    redis: values['redis-url'] ?? env('JOBHOOK_REDIS_URL'),
    database: values['database-url'] ?? env('JOBHOOK_DATABASE_URL'),
    nats: values['nats-url'] ?? env('JOBHOOK_NATS_URL'),
  };
  const given = Object.entries(urls).filter(([, url]) => url !== undefined);
  if (given.length !== 1) {
    throw new UsageError(
      given.length === 0
        ? 'failed needs where the queue is: --redis-url (BullMQ), --database-url (pg-boss) or --nats-url (JetStream)'
        : 'failed takes one of --redis-url, --database-url and --nats-url',
    );
  }
  const [engine, url] = given[0] as [keyof typeof urls, string];
  const opened = await open(engine, url, values);
  try {
    return await use(opened.handoff);
  } finally {
    await opened.close().catch(() => undefined);
  }
}

async function open(engine: 'redis' | 'database' | 'nats', url: string, values: Values) {
  const queue = values.queue ?? 'jobhook';
  if (engine === 'redis') {
    const { Queue } = await peer('bullmq', () => import('bullmq'));
    const { bullmqHandoff } = await import('jobhook/bullmq');
    const connection = { url, maxRetriesPerRequest: 1, enableOfflineQueue: false };
    const bullQueue = new Queue(queue, {
      connection,
      ...(values.prefix !== undefined && { prefix: values.prefix }),
    });
    bullQueue.on('error', () => undefined);
    await bullQueue.waitUntilReady().catch((error: unknown) => {
      void bullQueue.close();
      throw unreachable('Redis', error);
    });
    return { handoff: bullmqHandoff({ queue: bullQueue }), close: () => bullQueue.close() };
  }
  if (engine === 'database') {
    const { default: PgBoss } = await peer('pg-boss', () => import('pg-boss'));
    const { pgBossHandoff } = await import('jobhook/pg-boss');
    const schema = values.schema ?? 'pgboss';
    const boss = new PgBoss({
      connectionString: url,
      schema,
      supervise: false,
      schedule: false,
      migrate: false,
      max: 2,
    });
    boss.on('error', () => undefined);
    await boss.start().catch(async (error: unknown) => {
      // pg-boss answers "not installed" when PostgreSQL is reached but the schema holds no pg-boss.
      const holders = await pgBossSchemas(boss).catch(() => undefined);
      await (boss.getDb() as { close?: () => Promise<void> }).close?.().catch(() => undefined);
      if (holders !== undefined && !holders.includes(schema)) throw noPgBoss(schema, holders);
      throw unreachable('PostgreSQL', error);
    });
    return { handoff: pgBossHandoff({ boss, queue }), close: () => boss.stop({ graceful: false }) };
  }
  const { connect } = await peer('@nats-io/transport-node', () => import('@nats-io/transport-node'));
  const { jetstream } = await peer('@nats-io/jetstream', () => import('@nats-io/jetstream'));
  const { natsHandoff } = await import('jobhook/nats');
  const nc = await connect({ servers: url, timeout: 5000, reconnect: false }).catch((error: unknown) => {
    throw unreachable('NATS', error);
  });
  const handoff = natsHandoff({
    js: jetstream(nc),
    ...(values.stream !== undefined && { stream: values.stream }),
    ...(values.subject !== undefined && { subject: values.subject }),
    warn: () => undefined,
  });
  return { handoff, close: () => nc.close() };
}

/** The schemas of the database that hold pg-boss's tables (a `job` and a `version` table). */
async function pgBossSchemas(boss: {
  getDb(): { executeSql(text: string, values: unknown[]): Promise<{ rows: unknown[] }> };
}) {
  const { rows } = await boss.getDb().executeSql(
    `SELECT table_schema AS schema FROM information_schema.tables WHERE table_name = 'job'
      INTERSECT SELECT table_schema FROM information_schema.tables WHERE table_name = 'version'
      ORDER BY 1`,
    [],
  );
  return (rows as { schema: string }[]).map((row) => row.schema);
}

/** A schema with no pg-boss in it, said plainly, with the schemas that hold one (the first few). */
function noPgBoss(schema: string, holders: string[]): CommandError {
  const shown = holders.slice(0, 10).map((name) => JSON.stringify(name));
  const more = holders.length > shown.length ? ` and ${holders.length - shown.length} more` : '';
  const where =
    holders.length === 0
      ? 'no schema of this database holds one'
      : `pg-boss is in schema ${shown.join(', ')}${more}: pass --schema`;
  return new CommandError(
    `there is no pg-boss in schema ${JSON.stringify(schema)} of this database (${where})`,
  );
}

/** Loads an optional peer, or says which package to install. */
async function peer<T>(name: string, load: () => Promise<T>): Promise<T> {
  try {
    return await load();
  } catch (error) {
    const code = (error as { code?: unknown })?.code;
    if (code === 'ERR_MODULE_NOT_FOUND' || code === 'MODULE_NOT_FOUND') {
      throw new CommandError(`this needs the ${name} package: npm install ${name}`);
    }
    throw error;
  }
}

/** A connection failure as one line that names the service, never the URL (it may hold a password). */
function unreachable(service: string, error: unknown): CommandError {
  const why = messageOf(error);
  return new CommandError(`could not reach ${service}: ${why.replace(/\w+:\/\/[^\s]*/g, '<url>')}`);
}

function help(text: string): number {
  process.stdout.write(text);
  return 0;
}
