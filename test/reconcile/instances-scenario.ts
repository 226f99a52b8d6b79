// The reconcile instances scenario: three receiver processes behind a round-robin proxy share one
// dedupe store and one job tracker (Redis, or Postgres); the gateway simulator drops half the
// deliveries and retries none; a batch "script" (this process) submits the jobs through a client
// that tracks them in the same tracker; one receiver is killed with SIGKILL mid-run and restarted.
// It returns what happened; the test decides what must hold.
import { createClient } from 'jobhook/client';
import { redisJobTracker } from 'jobhook/redis';
import { postgresJobTracker } from 'jobhook/postgres';
import type { JobTracker } from 'jobhook/extend';
import { startGateway } from 'jobhook/testing';
import { DATABASE_URL, freePort, postgresForTest, REDIS_URL, redisForTest } from '../support/services.js';
import { startChild, stopChild, type Child } from '../many-instances/processes.js';

const SECRET = `whsec_${Buffer.from('reconcile-instances-secret-32byt').toString('base64')}`;
/**
 * The tracker's and the store's lease. A poll's time-out is a quarter of it: on this shared 2-core
 * machine running five processes, a shorter one times polls out, and their back-off outlasts the run.
 */
const LEASE_MS = 10_000;
const AFTER_MS = 1000;
const INTERVAL_MS = 250;

/** One line of the shared record: `<task> <pid> <source>` or `<task> <pid> <start> <end>`. */
interface Service {
  env: Record<string, string>;
  jobs: JobTracker;
  lines(kind: 'effects' | 'polls'): Promise<string[]>;
  cleanup(): Promise<void>;
}

export type VariantName = 'redis' | 'postgres';

async function prepare(variant: VariantName): Promise<Service> {
  if (variant === 'redis') {
    const service = redisForTest();
    return {
      env: { VARIANT: 'redis', REDIS_URL, PREFIX: service.prefix },
      jobs: redisJobTracker({ redis: service.redis, prefix: `${service.prefix}jobs:`, leaseMs: LEASE_MS }),
      lines: (kind) => service.redis.lrange(`${service.prefix}${kind}`, 0, -1),
      cleanup: () => service.cleanup(),
    };
  }
  const service = await postgresForTest();
  await service.pool.query(
    // Rows come back in insertion order only when asked: concurrent inserts from many connections
    // fill different pages, and a plain scan returns a later run before an earlier one.
    `CREATE TABLE "${service.schema}".records (id bigserial, kind text NOT NULL, line text NOT NULL)`,
  );
  return {
    env: { VARIANT: 'postgres', DATABASE_URL, SCHEMA: service.schema },
    jobs: postgresJobTracker({ pool: service.pool, table: `${service.schema}.jobs`, leaseMs: LEASE_MS }),
    async lines(kind) {
      const { rows } = await service.pool.query(
        `SELECT line FROM "${service.schema}".records WHERE kind = $1 ORDER BY id`,
        [kind],
      );
      return rows.map((row: { line: string }) => row.line);
    },
    cleanup: () => service.cleanup(),
  };
}

export interface ScenarioResult {
  tasks: string[];
  dropped: Set<string>;
  /** Per task: the `pid:source` of each handler run, in order. */
  runs: Map<string, string[]>;
  /** Per task: its polls, `[pid, start, end]`. */
  polls: Map<string, [string, number, number][]>;
  killedPid: string;
  /** Requests the gateway answered 429, by path. */
  rateLimited: string[];
  pendingAfter: number;
  /** Tasks still tracked at the end, with their polls: what to look at when one is missing. */
  stillTracked: { taskId: string; polls: number; ageMs: number }[];
  /** What the receivers wrote to stderr (the killed one's too): a lost claim is warned there. */
  stderr: string[];
  seconds: number;
}

export async function runScenario(
  variant: VariantName,
  { jobs: count, log = () => undefined }: { jobs: number; log?: (line: string) => void },
): Promise<ScenarioResult> {
  const started = Date.now();
  const service = await prepare(variant);
  const cleanups: (() => Promise<unknown>)[] = [() => service.cleanup()];
  try {
    const gateway = await startGateway({
      credits: count * 10,
      maxConcurrentJobs: count,
      // A real limit, with room for the jobs, the polls and the counters: a 429 would be the
      // reconciler's doing.
      rateLimit: { requests: 4 * count, windowMs: 60_000 },
      jobs: {
        stepMs: 1,
        outcome: (job) => (job.prompt.endsWith('7') ? { status: 'failed' } : { status: 'completed' }),
      },
      deliveries: { dropRate: 0.5, retryDelaysMs: [], timeoutMs: 20_000 },
    });
    cleanups.unshift(() => gateway.close());
    const env = {
      ...service.env,
      SECRET,
      BASE_URL: gateway.baseUrl,
      API_KEY: gateway.apiKey,
      LEASE_MS: String(LEASE_MS),
      AFTER_MS: String(AFTER_MS),
      INTERVAL_MS: String(INTERVAL_MS),
    };
    const ports = await Promise.all([0, 1, 2].map(() => freePort()));
    const start = (port: number) => startChild('../reconcile/instance.ts', { ...env, PORT: String(port) });
    const instances: Child[] = await Promise.all(ports.map(start));
    const everyInstance = [...instances];
    cleanups.unshift(() => Promise.all(instances.map((child) => stopChild(child, 'SIGKILL'))));
    const proxy = await startChild('./proxy-process.ts', { BACKENDS: JSON.stringify(ports) });
    cleanups.unshift(() => stopChild(proxy, 'SIGKILL'));
    const url = `http://127.0.0.1:${proxy.readyLine.split(' ')[1]}/webhooks`;
    const client = createClient({ baseUrl: gateway.baseUrl, apiKey: gateway.apiKey, jobs: service.jobs });
    await client.webhooks.create({ url, events: ['job.completed', 'job.failed'], secret_key: SECRET });

    const killedPid = String(instances[1]!.process.pid);
    let restarted: Promise<void> | undefined;
    const tasks: string[] = [];
    let submitted = 0;
    const since = Date.now();
    const submitOne = async () => {
      while (submitted < count) {
        const n = submitted++;
        const due = since + n * 4 - Date.now(); // 250 jobs a second
        if (due > 0) await new Promise((resolve) => setTimeout(resolve, due));
        if (n === Math.floor(count / 2)) {
          await stopChild(instances[1]!, 'SIGKILL');
          log(`instance ${killedPid} killed`);
          restarted = start(ports[1]!).then((child) => {
            instances[1] = child;
            everyInstance.push(child);
            log(`instance restarted as ${child.process.pid}`);
          });
        }
        const { task_id } = await client.images.generate({ model: 'm', prompt: `job ${n}` });
        tasks.push(task_id);
      }
    };
    await Promise.all(Array.from({ length: 16 }, submitOne));
    await restarted;
    await gateway.settled();
    log(`submitted ${count} jobs, ${gateway.dropped.length} deliveries dropped`);

    const deadline = Date.now() + 120_000;
    let runs = new Map<string, string[]>();
    while (Date.now() < deadline) {
      runs = new Map();
      for (const line of await service.lines('effects')) {
        const [task, pid, source] = line.split(' ');
        runs.set(task!, [...(runs.get(task!) ?? []), `${pid}:${source}`]);
      }
      if (tasks.every((task) => runs.has(task)) && (await service.jobs.pending()).length === 0) break;
      await new Promise((resolve) => setTimeout(resolve, 250));
    }
    const polls = new Map<string, [string, number, number][]>();
    for (const line of await service.lines('polls')) {
      const [task, pid, from, to] = line.split(' ');
      polls.set(task!, [...(polls.get(task!) ?? []), [pid!, Number(from), Number(to)]]);
    }
    return {
      tasks,
      dropped: new Set(gateway.dropped.map((drop) => drop.taskId)),
      runs,
      polls,
      killedPid,
      rateLimited: gateway.requests.filter((r) => r.status === 429).map((r) => `${r.method} ${r.path}`),
      pendingAfter: (await service.jobs.pending()).length,
      stillTracked: (await service.jobs.pending({ limit: 50 })).map((job) => ({
        taskId: job.taskId,
        polls: job.polls,
        ageMs: Date.now() - job.submittedAt,
      })),
      stderr: everyInstance.map((child) => child.stderr()).filter((text) => text !== ''),
      seconds: (Date.now() - started) / 1000,
    };
  } finally {
    for (const cleanup of cleanups) await cleanup().catch(() => undefined);
  }
}
