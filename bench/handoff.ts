/**
 * The hand-offs, end to end: `runHandoff`, called by run.ts (`npm run bench`).
 *
 * Signed deliveries over HTTP (keep-alive, `concurrency` in flight, half to each receiver, every
 * one a fresh event) to setups of two receiver processes each (bench/handoff-process.ts):
 *
 * - baseline: the receivers run the handler themselves, deduplicating with `redisDedupeStore`,
 *   the shared store two instances would otherwise need;
 * - hand-off: the receivers hand each event off to BullMQ (`bullmqHandoff`), and two worker
 *   processes run the handler (`runWorker`);
 * - pgboss and nats: the same with pg-boss (PostgreSQL at JOBHOOK_DATABASE_URL, a schema of its
 *   own) and NATS JetStream (JOBHOOK_NATS_URL, a stream of its own), each skipped without its
 *   server.
 *
 * Per setup and round: deliveries per second until every receiver answered and until every handler
 * ran, and CPU time per delivery of the receiver processes, of the worker processes (each asked
 * over IPC) and of the Redis server (INFO cpu). Rounds alternate the setups' order. Uses Redis at
 * JOBHOOK_REDIS_URL (default redis://127.0.0.1:6379) under a key prefix of its own and removes its
 * keys; without Redis it is skipped with one line.
 *
 * Like every bench file it loads jobhook from the dist snapshot beside the compiled bench
 * (bench/jobhook.ts) and forks the compiled handoff-process.js with plain node, so it runs from
 * `npm run bench` only, not with tsx.
 */
import { fork, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { Agent, request } from 'node:http';
import { jetstreamManager } from '@nats-io/jetstream';
import { connect } from '@nats-io/transport-node';
import { Redis } from 'ioredis';
import pg from 'pg';
import { jobCompletedBody, standardHeaders, withFreshEventId } from './fixtures.js';
import { PATH, type Ready, type Role, type Usage } from './handoff-process.js';
import { median } from './measure.js';
import { DATABASE_URL, deleteKeys, probe, REDIS_URL } from './stores.js';

const NATS_URL = process.env.JOBHOOK_NATS_URL || 'nats://127.0.0.1:4222';

export interface HandoffOptions {
  /**
   * Deliveries per deployment before the rounds. The receivers' CPU per delivery keeps falling
   * for several thousand (JIT, heap sizing): fewer leave the first rounds slower.
   */
  warmup: number;
  rounds: number;
  /** Deliveries per setup and round. */
  deliveries: number;
  /** Requests in flight, each on its own keep-alive connection, half to each receiver. */
  concurrency: number;
  /** The setups to run (default all): bench/handoff-run.ts measures one engine against the baseline. */
  setups?: readonly Setup[];
}

export const SETUPS = ['inline', 'handoff', 'pgboss', 'nats'] as const;
export type Setup = (typeof SETUPS)[number];

export interface HandoffSamples {
  /** Deliveries per second from the first request until the last answer; one entry per round. */
  answered: number[];
  /** Deliveries per second from the first request until the last handler run. */
  handled: number[];
  /** CPU time (user + system) of the two receiver processes per delivery, µs. */
  receiverCpu: number[];
  /** The same for the two worker processes (0 in the baseline, which has none). */
  workerCpu: number[];
  /** CPU time of the Redis server per delivery, µs (the whole server's: other clients count too). */
  redisCpu: number[];
}

export interface HandoffResults {
  options: HandoffOptions;
  /** One entry per setup that ran (a setup whose server is not running is skipped). */
  samples: Partial<Record<Setup, HandoffSamples>>;
  /** Why the section did not run, if it did not. */
  skipped: string[];
}

/** A forked handoff-process.js: its port (receivers) and its CPU time and handler runs on demand. */
class Child {
  private exited: Error | undefined;
  private readonly waiting = new Set<(error: Error) => void>();

  private constructor(
    private readonly child: ChildProcess,
    readonly role: Role,
    readonly port: number | undefined,
  ) {
    child.on('exit', (code, signal) => {
      this.exited = new Error(`a ${role} process exited (${signal ?? code})`);
      for (const reject of this.waiting) reject(this.exited);
    });
  }

  static start(role: Role, url: string, prefix: string): Promise<Child> {
    const child = fork(new URL('./handoff-process.js', import.meta.url).pathname, [role, url, prefix], {
      execArgv: process.execArgv,
      stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    });
    return new Promise((resolve, reject) => {
      child.once('error', reject);
      child.once('exit', (code) =>
        reject(new Error(`a ${role} process exited (${code}) before it was ready`)),
      );
      child.once('message', (ready: Ready) => {
        child.removeAllListeners('exit');
        resolve(new Child(child, role, ready.port));
      });
    });
  }

  usage(): Promise<Usage> {
    if (this.exited) return Promise.reject(this.exited);
    return new Promise((resolve, reject) => {
      this.waiting.add(reject);
      this.child.once('message', (usage: Usage) => {
        this.waiting.delete(reject);
        resolve(usage);
      });
      this.child.send('cpu');
    });
  }

  async stop(): Promise<void> {
    if (this.exited || !this.child.connected) return;
    const exit = new Promise((resolve) => this.child.once('exit', resolve));
    this.child.disconnect(); // the process exits when its parent goes away
    const timer = setTimeout(() => this.child.kill('SIGKILL'), 5000);
    await exit;
    clearTimeout(timer);
  }
}

type Delivery = { headers: Record<string, string>; body: Buffer };

const template = jobCompletedBody(1024);

function deliveries(count: number): Delivery[] {
  return Array.from({ length: count }, () => {
    const body = withFreshEventId(template);
    return { headers: standardHeaders(body), body };
  });
}

function post(agent: Agent, port: number, delivery: Delivery): Promise<void> {
  return new Promise((resolve, reject) => {
    const req = request({
      host: '127.0.0.1',
      port,
      method: 'POST',
      path: PATH,
      agent,
      headers: { ...delivery.headers, 'content-length': String(delivery.body.length) },
    });
    req.on('response', (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('end', () =>
        res.statusCode === 200
          ? resolve()
          : reject(new Error(`HTTP ${res.statusCode}: ${Buffer.concat(chunks).toString('utf8')}`)),
      );
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end(delivery.body);
  });
}

const sum = (usages: Usage[], field: keyof Usage) => usages.reduce((total, u) => total + u[field], 0);

/** CPU time the Redis server used so far (user + system, all its threads), µs. */
async function redisCpu(redis: Redis): Promise<number> {
  const info = await redis.info('cpu');
  const seconds = (name: string) => Number(new RegExp(`^${name}:([\\d.]+)`, 'm').exec(info)?.[1] ?? 0);
  return (seconds('used_cpu_user') + seconds('used_cpu_sys')) * 1e6;
}

interface Setups {
  receivers: Partial<Record<Setup, Child[]>>;
  workers: Partial<Record<Setup, Child[]>>;
}

/** Sends `count` fresh deliveries to the setup's receivers and waits until every handler ran. */
async function round(setups: Setups, setup: Setup, count: number, concurrency: number, redis: Redis) {
  const receivers = setups.receivers[setup]!;
  const workers = setups.workers[setup] ?? [];
  // The handler runs in the workers after a hand-off, in the receivers otherwise.
  const handlers = setup === 'inline' ? receivers : workers;
  const batch = deliveries(count);
  const agent = new Agent({ keepAlive: true, maxSockets: concurrency });
  const receiversBefore = await Promise.all(receivers.map((c) => c.usage()));
  const workersBefore = await Promise.all(workers.map((c) => c.usage()));
  const handledBefore = sum(setup === 'inline' ? receiversBefore : workersBefore, 'handled');
  const redisBefore = await redisCpu(redis);
  try {
    const started = process.hrtime.bigint();
    let next = 0;
    await Promise.all(
      Array.from({ length: concurrency }, async (_, lane) => {
        const port = receivers[lane % receivers.length]!.port!;
        while (next < batch.length) await post(agent, port, batch[next++]!);
      }),
    );
    const answeredS = Number(process.hrtime.bigint() - started) / 1e9;
    // Every delivery is a fresh event: each runs the handler exactly once. A stall this long means
    // jobs were lost (or the machine is far too busy to measure).
    let handled = 0;
    let progressAt = Date.now();
    for (;;) {
      const now = sum(await Promise.all(handlers.map((c) => c.usage())), 'handled') - handledBefore;
      if (now > handled) progressAt = Date.now();
      handled = now;
      if (handled >= count) break;
      if (Date.now() - progressAt > 30_000) {
        throw new Error(`hand-off bench, ${setup}: ${count - handled} of ${count} handlers never ran`);
      }
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    const handledS = Number(process.hrtime.bigint() - started) / 1e9;
    if (handled > count) {
      throw new Error(`hand-off bench, ${setup}: ${handled - count} handler runs more than deliveries`);
    }
    const receiversAfter = await Promise.all(receivers.map((c) => c.usage()));
    const workersAfter = await Promise.all(workers.map((c) => c.usage()));
    const redisAfter = await redisCpu(redis);
    return {
      answered: count / answeredS,
      handled: count / handledS,
      receiverCpu: (sum(receiversAfter, 'cpuUs') - sum(receiversBefore, 'cpuUs')) / count,
      workerCpu: (sum(workersAfter, 'cpuUs') - sum(workersBefore, 'cpuUs')) / count,
      redisCpu: (redisAfter - redisBefore) / count,
    };
  } finally {
    agent.destroy();
  }
}

export async function runHandoff(options: HandoffOptions): Promise<HandoffResults> {
  const skipped: string[] = [];
  const redis = new Redis(REDIS_URL, { lazyConnect: true, maxRetriesPerRequest: 1, connectTimeout: 2000 });
  redis.on('error', () => undefined);
  const what = `BullMQ hand-off: Redis at ${REDIS_URL}`;
  if (!(await probe(what, () => redis.connect().then(() => redis.ping()), skipped))) {
    redis.disconnect();
    return { options, samples: {}, skipped };
  }
  const prefix = `jobhook-bench-handoff-${randomBytes(6).toString('hex')}`;
  const schema = prefix.replaceAll('-', '_');
  const children: Child[] = [];
  const start = async (role: Role, n: number, url = REDIS_URL, name = prefix) => {
    const started = await Promise.allSettled(Array.from({ length: n }, () => Child.start(role, url, name)));
    for (const s of started) if (s.status === 'fulfilled') children.push(s.value);
    for (const s of started) if (s.status === 'rejected') throw s.reason;
    return started.map((s) => (s as PromiseFulfilledResult<Child>).value);
  };
  const samples: HandoffResults['samples'] = {};
  const postgres = new pg.Client({ connectionString: DATABASE_URL, connectionTimeoutMillis: 2000 });
  postgres.on('error', () => undefined);
  const onPostgres = await probe(
    `pg-boss hand-off: PostgreSQL at ${DATABASE_URL}`,
    () => postgres.connect(),
    skipped,
  );
  const nats = await connect({ servers: NATS_URL, timeout: 2000, reconnect: false }).catch(
    (error: unknown) => {
      skipped.push(`NATS hand-off: JetStream at ${NATS_URL}: not running (${String(error)}), skipped`);
      return undefined;
    },
  );
  const wanted = (setup: Setup) => options.setups?.includes(setup) ?? true;
  try {
    const setups: Setups = { receivers: { inline: await start('inline', 2) }, workers: {} };
    if (wanted('handoff')) {
      setups.receivers.handoff = await start('handoff', 2);
      setups.workers.handoff = await start('worker', 2);
    }
    if (onPostgres && wanted('pgboss')) {
      setups.receivers.pgboss = await start('pgboss', 2, DATABASE_URL, schema);
      setups.workers.pgboss = await start('pgboss-worker', 2, DATABASE_URL, schema);
    }
    if (nats && wanted('nats')) {
      setups.receivers.nats = await start('nats', 2, NATS_URL, prefix);
      setups.workers.nats = await start('nats-worker', 2, NATS_URL, prefix);
    }
    const setupsRun = SETUPS.filter((setup) => setups.receivers[setup]);
    for (const setup of setupsRun) {
      samples[setup] = { answered: [], handled: [], receiverCpu: [], workerCpu: [], redisCpu: [] };
      await round(setups, setup, options.warmup, options.concurrency, redis);
    }
    for (let r = 0; r < options.rounds; r++) {
      for (let k = 0; k < setupsRun.length; k++) {
        const setup = setupsRun[(r + k) % setupsRun.length]!;
        const result = await round(setups, setup, options.deliveries, options.concurrency, redis);
        const s = samples[setup]!;
        for (const field of Object.keys(result) as (keyof typeof result)[]) s[field].push(result[field]);
      }
    }
  } finally {
    await Promise.all(children.map((c) => c.stop()));
    await deleteKeys(redis, prefix).catch(() => undefined);
    redis.disconnect();
    if (onPostgres) await postgres.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`).catch(() => undefined);
    await postgres.end().catch(() => undefined);
    if (nats) {
      const jsm = await jetstreamManager(nats);
      await jsm.streams.delete(prefix).catch(() => undefined);
      await jsm.streams.delete(`${prefix}_DONE`).catch(() => undefined); // the workers' done keys
      await nats.close();
    }
  }
  return { options, samples, skipped };
}

/** Median over rounds of a hand-off's figure over the baseline's, each ratio within one round. */
export function handoffRatio(
  results: HandoffResults,
  field: keyof HandoffSamples | 'totalCpu',
  setup: Exclude<Setup, 'inline'> = 'handoff',
): number {
  const of = (s: HandoffSamples, i: number) =>
    field === 'totalCpu' ? s.receiverCpu[i]! + s.workerCpu[i]! : s[field][i]!;
  const handoff = results.samples[setup]!;
  const inline = results.samples.inline!;
  return median(handoff.answered.map((_, i) => of(handoff, i) / of(inline, i)));
}
