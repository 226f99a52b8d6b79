/**
 * The inbox: what storing each delivery before its 2xx adds to the answer, and how many deliveries
 * a second one process stores. `receiver.receive()` (no HTTP) on fresh 1 KB `job.completed`
 * deliveries, with the in-memory dedupe store and no inbox (the baseline), with `sqliteInbox` on a
 * file of the machine's disk (each batch committed, then the `-wal` file flushed with fdatasync
 * before the answers) and with `postgresInbox` on the PostgreSQL of JOBHOOK_DATABASE_URL (skipped
 * with one line when it does not answer), interleaved round by round. The latency is per delivery,
 * one at a time, with a handler, so the inbox's own runs of it share the process as they do in an
 * app; the rate is with 64 in flight and no handler yet, so that only storing is counted. The
 * disk's own flush time is measured beside them, in the same folder: a 1 KB append and fsync (what
 * a commit with `synchronous=FULL` costs), and a 1 KB write in place and fdatasync (what the flush
 * of a `-wal` file that SQLite reuses after a checkpoint costs): no durable commit can take less.
 */
import { closeSync, fdatasyncSync, fsyncSync, mkdtempSync, openSync, rmSync, writeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { jobCompletedBody, SECRET, standardDeliveries } from './fixtures.js';
import { median } from './measure.js';
import { table, type Target } from './report.js';
import {
  createReceiver,
  memoryDedupeStore,
  postgresDedupeStore,
  postgresInbox,
  sqliteDedupeStore,
  sqliteInbox,
} from './jobhook.js';
import type { Inbox, DedupeStore } from './jobhook.js';
import { DATABASE_URL, probe } from './stores.js';

export const INBOX_SUBJECTS = ['memory', 'sqlite', 'postgres'] as const;
export type InboxSubject = (typeof INBOX_SUBJECTS)[number];

export interface InboxBenchOptions {
  rounds: number;
  /** Deliveries one at a time per subject and round. */
  sequential: number;
  /** Deliveries with 64 in flight per subject and round. */
  concurrent: number;
}

export interface InboxResults {
  options: InboxBenchOptions;
  /** Each answer's time, ms, one at a time with no handler (the answer alone), pooled over the rounds. */
  latencies: Partial<Record<InboxSubject, number[]>>;
  /** The same with a handler: the inbox's runs of it (lease, claim, record) share the process. */
  withRuns: Partial<Record<InboxSubject, number[]>>;
  /** Deliveries answered (stored) per second with 64 in flight, one entry per round. */
  rates: Partial<Record<InboxSubject, number[]>>;
  /** The disk's flush of a 1 KB append (fsync), ms, pooled. */
  fsync: number[];
  /** The disk's flush of a 1 KB write in place (fdatasync), ms, pooled. */
  fdatasync: number[];
  skipped: string[];
}

const IN_FLIGHT = 64;
/** The sizes of `npm run bench` and of BENCH_QUICK=1. */
export const INBOX_FULL: InboxBenchOptions = { rounds: 3, sequential: 300, concurrent: 1500 };
export const INBOX_QUICK: InboxBenchOptions = { rounds: 1, sequential: 100, concurrent: 500 };
const SECRET_BODY = jobCompletedBody(1024);

function quantile(values: readonly number[], q: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? NaN;
}

interface Made {
  inbox?: Inbox;
  dedupe: DedupeStore;
}

async function oneAtATime(made: Made, n: number, into: number[], handler: boolean): Promise<void> {
  const receiver = createReceiver({ secret: SECRET, ...made });
  if (handler) receiver.onJobCompleted(() => undefined);
  for (const delivery of standardDeliveries(SECRET_BODY, n)) {
    const started = performance.now();
    const answer = await receiver.receive(delivery);
    into.push(performance.now() - started);
    if (answer.status !== 200) throw new Error(`answered ${answer.status} ${answer.body}`);
  }
  await receiver.close();
}

async function stored(made: Made, n: number): Promise<number> {
  // No handler: the inbox runs nothing, so only the writes before the answers are counted.
  const receiver = createReceiver({ secret: SECRET, ...made });
  const batch = standardDeliveries(SECRET_BODY, n);
  let next = 0;
  const started = performance.now();
  await Promise.all(
    Array.from({ length: IN_FLIGHT }, async () => {
      while (next < batch.length) {
        const answer = await receiver.receive(batch[next++]!);
        if (answer.status !== 200) throw new Error(`answered ${answer.status} ${answer.body}`);
      }
    }),
  );
  const seconds = (performance.now() - started) / 1000;
  await receiver.close();
  return n / seconds;
}

function flushTimes(dir: string, n: number, appends: number[], inPlace: number[]): void {
  const block = Buffer.alloc(1024, 7);
  const fd = openSync(join(dir, 'fsync-probe'), 'w');
  try {
    for (let i = 0; i < n; i++) {
      const started = performance.now();
      writeSync(fd, block);
      fsyncSync(fd);
      appends.push(performance.now() - started);
    }
    // The same blocks again, the file's size unchanged: only the data to flush, as in a reused WAL.
    for (let i = 0; i < n; i++) {
      const started = performance.now();
      writeSync(fd, block, 0, block.length, i * block.length);
      fdatasyncSync(fd);
      inPlace.push(performance.now() - started);
    }
  } finally {
    closeSync(fd);
  }
}

export async function runInbox(options: InboxBenchOptions): Promise<InboxResults> {
  const dir = mkdtempSync(join(tmpdir(), 'jobhook-bench-inbox-'));
  const results: InboxResults = {
    options,
    latencies: {},
    withRuns: {},
    rates: {},
    fsync: [],
    fdatasync: [],
    skipped: [],
  };
  const pool = new pg.Pool({ connectionString: DATABASE_URL, max: 16 });
  pool.on('error', () => undefined);
  const schema = `jobhook_bench_inbox_${Date.now().toString(36)}`;
  const havePostgres = await probe(
    `PostgreSQL at ${DATABASE_URL}`,
    () => pool.query(`CREATE SCHEMA "${schema}"`),
    results.skipped,
  );
  let table = 0;
  const makers: Partial<Record<InboxSubject, () => Made>> = {
    memory: () => ({ dedupe: memoryDedupeStore() }),
    sqlite: () => {
      const path = join(dir, `inbox${++table}.db`);
      return { inbox: sqliteInbox({ path }), dedupe: sqliteDedupeStore({ path }) };
    },
  };
  if (havePostgres) {
    makers.postgres = () => {
      const n = ++table;
      return {
        inbox: postgresInbox({ pool, table: `${schema}.inbox${n}` }),
        dedupe: postgresDedupeStore({ pool, table: `${schema}.deliveries${n}` }),
      };
    };
  }
  try {
    for (let round = 0; round < options.rounds; round++) {
      for (const name of INBOX_SUBJECTS) {
        const make = makers[name];
        if (!make) continue;
        // The disk's flush in slices just before each phase, so that it meets the disk as they do
        // (PostgreSQL's own writes, on this machine, go on after its phases).
        const slice = Math.ceil(options.sequential / 3);
        flushTimes(dir, slice, results.fsync, results.fdatasync);
        await oneAtATime(make(), options.sequential, (results.latencies[name] ??= []), false);
        flushTimes(dir, slice, results.fsync, results.fdatasync);
        await oneAtATime(make(), options.sequential, (results.withRuns[name] ??= []), true);
        flushTimes(dir, slice, results.fsync, results.fdatasync);
        (results.rates[name] ??= []).push(await stored(make(), options.concurrent));
      }
    }
  } finally {
    if (havePostgres) await pool.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`).catch(() => undefined);
    await pool.end();
    rmSync(dir, { recursive: true, force: true });
  }
  return results;
}

const LABELS: Record<InboxSubject, string> = {
  memory: 'no inbox (in-memory store)',
  sqlite: 'sqliteInbox (durable commit)',
  postgres: 'postgresInbox',
};

/** ms added to the answer at quantile `q` over the baseline, and the rate, for the targets. */
function added(r: InboxResults, name: InboxSubject, q: number, runs = false): number {
  const of = runs ? r.withRuns : r.latencies;
  return quantile(of[name]!, q) - quantile(of.memory!, q);
}

export function inboxTargets(r: InboxResults): Target[] {
  if (!r.latencies.sqlite || !r.latencies.memory) return [];
  const p99 = added(r, 'sqlite', 0.99);
  const rate = median(r.rates.sqlite!);
  return [
    {
      name: 'Answer latency added by sqliteInbox (durable commit), p99, 1 KB, the answer alone',
      short: 'sqliteInbox p99 added',
      value: p99 / 2,
      op: '≤',
      bound: 1,
      met: p99 <= 2,
      text: { value: `+${p99.toFixed(2)} ms`, bound: '+2 ms' },
    },
    {
      name: 'Deliveries stored per second by sqliteInbox, one process, 64 in flight',
      short: 'sqliteInbox stored/s',
      value: rate / 2000,
      op: '≥',
      bound: 1,
      met: rate >= 2000,
      text: { value: `${rate.toFixed(0)}/s`, bound: '2,000/s' },
    },
  ];
}

export function inboxSection(r: InboxResults): string[] {
  const { rounds, sequential, concurrent } = r.options;
  const out = ['## The inbox', ''];
  out.push(
    `\`receiver.receive()\` (no HTTP) on fresh 1 KB deliveries, ${rounds} interleaved rounds per inbox of ${sequential} one at a time with no handler (the answer alone: verify, store, answer), ${sequential} one at a time with a handler (which the inbox runs after each answer, in the same process, while the next delivery comes), and ${concurrent} with ${IN_FLIGHT} in flight and no handler (storing only). "Added" is the difference to no inbox at the same quantile. The disk's flush, in the same folder as the SQLite file and in slices just before each phase, is a 1 KB append and fsync (a commit with \`synchronous=FULL\`), and a 1 KB write in place and fdatasync (the flush of a \`-wal\` file that SQLite reuses after a checkpoint, as \`sqliteInbox\` does before its answers): the least a durable commit costs on this disk.`,
    '',
  );
  const ms = (value: number) => `${value.toFixed(2)} ms`;
  const rows = INBOX_SUBJECTS.filter((name) => r.latencies[name]).map((name) => {
    const base = name === 'memory';
    const cells = (runs: boolean) => {
      const of = (runs ? r.withRuns : r.latencies)[name]!;
      return [
        ms(quantile(of, 0.5)),
        base ? '' : `+${ms(added(r, name, 0.5, runs))}`,
        ms(quantile(of, 0.99)),
        base ? '' : `+${ms(added(r, name, 0.99, runs))}`,
      ];
    };
    return [LABELS[name], ...cells(false), ...cells(true), median(r.rates[name]!).toFixed(0)];
  });
  const flush = (times: number[]) => [ms(quantile(times, 0.5)), '', ms(quantile(times, 0.99)), ''];
  rows.push(['the disk: write 1 KB + fsync', ...flush(r.fsync), '', '', '', '', '']);
  rows.push(['the disk: 1 KB in place + fdatasync', ...flush(r.fdatasync), '', '', '', '', '']);
  const head = [
    '',
    'answer alone: p50',
    'added',
    'p99',
    'added',
    'with its runs: p50',
    'added',
    'p99',
    'added',
  ];
  out.push(table([...head, `stored/s, ${IN_FLIGHT} in flight`], rows), '');
  for (const line of r.skipped) out.push(`- ${line}`);
  if (r.skipped.length > 0) out.push('');
  return out;
}
