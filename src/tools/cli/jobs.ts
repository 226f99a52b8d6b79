import { messageOf } from 'jobhook/extend';
import type { JobTracker, TrackedJob } from 'jobhook/extend';
import type * as IORedis from 'ioredis';
import type * as Pg from 'pg';
import { CommandError, UsageError, env, integer, out, parse } from './args.js';
import { jobsHelp } from './help.js';
import { jsonText } from './args.js';

/**
 * `jobhook jobs`: the tasks a shared job tracker (Redis or Postgres) still waits for, oldest
 * first, with their age and the polls made so far: what the reconciler has not settled yet.
 */
export async function jobs(args: string[]): Promise<number> {
  const { values, positionals } = parse(args, {
    'redis-url': { type: 'string' },
    'database-url': { type: 'string' },
    prefix: { type: 'string' },
    table: { type: 'string' },
    limit: { type: 'string' },
    json: { type: 'boolean' },
    help: { type: 'boolean', short: 'h' },
  });
  if (values.help) {
    process.stdout.write(jobsHelp);
    return 0;
  }
  if (positionals.length > 0) throw new UsageError(`unexpected argument ${JSON.stringify(positionals[0])}`);
  const limit = integer(values.limit, '--limit') ?? 100;
  const redisUrl = values['redis-url'] ?? env('JOBHOOK_REDIS_URL');
  const databaseUrl = values['database-url'] ?? env('JOBHOOK_DATABASE_URL');
  if ((redisUrl === undefined) === (databaseUrl === undefined)) {
    throw new UsageError('give the tracker as one of --redis-url or --database-url');
  }
  const opened = redisUrl
    ? await openRedis(redisUrl, values.prefix)
    : await openPostgres(databaseUrl!, values.table);
  try {
    const pending = await opened.tracker.pending({ limit });
    const now = Date.now();
    if (values.json) out(jsonText(pending.map((job) => asJson(job, now))));
    else printTable(pending, now);
    return 0;
  } catch (error) {
    throw new CommandError(messageOf(error));
  } finally {
    await opened.close();
  }
}

async function openRedis(url: string, prefix: string | undefined) {
  const { Redis } = await peer<typeof IORedis>('ioredis');
  const { redisJobTracker } = await import('jobhook/redis');
  const redis = new Redis(url, { lazyConnect: true, maxRetriesPerRequest: 1, connectTimeout: 5000 });
  redis.on('error', () => undefined);
  try {
    await redis.connect();
  } catch (error) {
    redis.disconnect();
    throw new CommandError(`cannot reach Redis: ${messageOf(error)}`);
  }
  const tracker: JobTracker = redisJobTracker({ redis, ...(prefix !== undefined && { prefix }) });
  return { tracker, close: () => Promise.resolve(redis.disconnect()) };
}

async function openPostgres(url: string, table: string | undefined) {
  const pg = await peer<typeof Pg & { default?: typeof Pg }>('pg');
  const { postgresJobTracker } = await import('jobhook/postgres');
  const pool = new (pg.default ?? pg).Pool({ connectionString: url, max: 1, connectionTimeoutMillis: 5000 });
  pool.on('error', () => undefined);
  // Reading creates nothing: a table that is not there yet is an empty tracker.
  const tracker = postgresJobTracker({ pool, createTable: false, ...(table !== undefined && { table }) });
  const pending: JobTracker['pending'] = async (options) => {
    try {
      return await tracker.pending(options);
    } catch (error) {
      if (/does not exist/.test(String((error as Error)?.message))) return [];
      throw error;
    }
  };
  return { tracker: { ...tracker, pending }, close: () => pool.end() };
}

/** An optional peer dependency, loaded only by the command that needs it (never bundled). */
async function peer<T>(name: string): Promise<T> {
  try {
    return (await import(name)) as T;
  } catch {
    throw new CommandError(`this needs the ${name} package: npm install ${name}`);
  }
}

function asJson(job: TrackedJob, now: number) {
  return {
    taskId: job.taskId,
    submittedAt: new Date(job.submittedAt).toISOString(),
    ageMs: now - job.submittedAt,
    polls: job.polls,
  };
}

function printTable(pending: readonly TrackedJob[], now: number): void {
  if (pending.length === 0) {
    out('No tracked jobs are waiting for their outcome.');
    return;
  }
  const rows = [
    ['TASK', 'AGE', 'POLLS', 'SUBMITTED'],
    ...pending.map((job) => [
      job.taskId,
      age(now - job.submittedAt),
      String(job.polls),
      new Date(job.submittedAt).toISOString(),
    ]),
  ];
  const widths = rows[0]!.map((_, column) => Math.max(...rows.map((row) => row[column]!.length)));
  for (const row of rows)
    out(
      row
        .map((cell, column) => cell.padEnd(widths[column]!))
        .join('  ')
        .trimEnd(),
    );
}

/** `42s`, `3m 12s`, `2h 05m`, `1d 03h`. */
export function age(ms: number): string {
  const seconds = Math.max(0, Math.floor(ms / 1000));
  const two = (n: number) => String(n).padStart(2, '0');
  if (seconds < 60) return `${seconds}s`;
  if (seconds < 3600) return `${Math.floor(seconds / 60)}m ${two(seconds % 60)}s`;
  if (seconds < 86_400) return `${Math.floor(seconds / 3600)}h ${two(Math.floor(seconds / 60) % 60)}m`;
  return `${Math.floor(seconds / 86_400)}d ${two(Math.floor(seconds / 3600) % 24)}h`;
}
