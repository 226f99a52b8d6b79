// The many-instances scenario: three receiver processes behind a round-robin proxy, the gateway
// simulator sending many jobs with duplicate deliveries, a second webhook for the same URL for
// part of the run (one event under two delivery ids), and one process killed with SIGKILL
// mid-run and restarted; a variant may add processes (the hand-off's workers, one of which it may
// have killed with SIGKILL and restarted too) and break something of its own mid-run (the
// hand-offs restart their broker or cut its connections). It returns what happened; the test decides
// what must hold.
//
// The proxy runs in a process of its own, and jobs are submitted at a bounded rate: with the
// proxy in the test process and every job submitted at once, the gateway simulator's attempts
// queued behind the proxy's work on one event loop of a loaded 2-core machine and hit their
// time-out by the hundreds at 5,000 jobs, although every receiver answered.
import { createClient } from 'jobhook/client';
import { startGateway, type Gateway } from 'jobhook/testing';
import { freePort } from '../support/services.js';
import { startChild, stopChild, type Child } from './processes.js';
import type { Variant } from './variants.js';

type DeliveryAttempt = Gateway['deliveries'][number];
const secret = (name: string) =>
  `whsec_${Buffer.from(`many-instances-${name}-secret-32b`).toString('base64')}`;
const SECRETS = [secret('first'), secret('second')];

/**
 * Claims of a killed process block their events this long; the retries below outlast it. A live
 * process renews its claims every quarter of it, so it must outlast a process starved of the CPU
 * on a busy machine: at 1 s, a live claim lapsed under load and another process ran the event.
 */
const LEASE_MS = 5000;
const RETRY_DELAYS_MS = [100, 200, 400, 800, 1000, 1500, 2000, 2000, 3000, 5000, 5000];
/**
 * One attempt's time-out. The gateway's default 5 s measures this machine's load more than the
 * receivers: a receiver answers in milliseconds, but on a shared 2-core machine running eight
 * processes an attempt can wait seconds for a turn of the CPU.
 */
const ATTEMPT_TIMEOUT_MS = 20_000;

export interface ScenarioOptions {
  jobs: number;
  /** Share of deliveries the gateway sends twice. */
  duplicateRate: number;
  instances?: number;
  /** Jobs submitted at once. */
  concurrency?: number;
  /** At most this many jobs submitted per second. Default 250. */
  jobsPerSecond?: number;
  log?: (line: string) => void;
}

export interface ScenarioResult {
  jobs: number;
  events: number;
  deliveries: number;
  /** Deliveries sent twice by the gateway (`duplicateRate`). */
  duplicatedDeliveries: number;
  /** Events sent under two delivery ids (both webhooks existed). */
  rotatedEvents: number;
  attempts: number;
  /** Events whose side effect happened exactly once. */
  exactlyOnce: number;
  /** Events with no side effect. */
  missing: string[];
  /** Events handled more than once, with the pids that did. */
  repeated: { eventId: string; pids: string[] }[];
  /** The pid killed with SIGKILL. */
  killedPid: string;
  /** The worker process killed with SIGKILL, when the variant asked for it (`workers.kill`). */
  killedWorkerPid: string | undefined;
  /** Worker processes that exited by themselves (crashed) before the scenario ended. */
  crashedWorkers: string[];
  /** Deliveries whose last attempt failed although their webhook still existed. */
  unanswered: DeliveryAttempt[];
  /** Deliveries to the second webhook that stopped when it was deleted (the gateway stops retrying). */
  cutByDeletion: number;
  /** What the variant reports once drained (the hand-off: jobs left in the failed set, ...). */
  drained: Record<string, number>;
  seconds: number;
}

interface Instance {
  port: number;
  child: Child;
}

function startInstance(port: number, env: Record<string, string>): Promise<Instance> {
  return startChild('./instance.ts', {
    ...env,
    PORT: String(port),
    SECRETS: JSON.stringify(SECRETS),
    LEASE_MS: String(LEASE_MS),
  }).then((child) => ({ port, child }));
}

export async function runScenario(variant: Variant, options: ScenarioOptions): Promise<ScenarioResult> {
  const {
    jobs,
    duplicateRate,
    instances: count = 3,
    concurrency = 16,
    jobsPerSecond = 250,
    log = () => undefined,
  } = options;
  const started = Date.now();
  const prepared = await variant.prepare();
  const instances: Instance[] = [];
  let stopping = false;
  const cleanups: (() => Promise<unknown>)[] = [() => prepared.cleanup()];
  try {
    const ports = await Promise.all(Array.from({ length: count }, () => freePort()));
    instances.push(...(await Promise.all(ports.map((port) => startInstance(port, prepared.env)))));
    cleanups.unshift(() => Promise.all(instances.map((instance) => stopChild(instance.child, 'SIGKILL'))));
    // A worker that exits on its own (a crash, not the SIGKILL below) leaves its running jobs to be
    // retried by the others: its repetitions are no broker's fault, so it is logged and reported.
    const crashedWorkers: string[] = [];
    let killing: Child | undefined;
    const startWorker = async () => {
      const worker = await startChild(prepared.workers!.script, {
        ...prepared.env,
        SECRETS: JSON.stringify(SECRETS),
      });
      let stderr = '';
      worker.process.stderr!.on('data', (data: Buffer) => (stderr = (stderr + data.toString()).slice(-2000)));
      worker.process.once('exit', (code, signal) => {
        if (worker === killing || stopping) return;
        const pid = String(worker.process.pid);
        crashedWorkers.push(pid);
        // The error's message and where it was thrown, not the dump of its fields.
        const why = stderr
          .split('\n')
          .filter((line) => /^\s*(\w*Error\b|error:|at )/.test(line))
          .slice(0, 6)
          .map((line) => line.trim());
        log(`worker ${pid} exited by itself (${signal ?? code}): ${why.join(' | ')}`);
      });
      return worker;
    };
    const workers = await Promise.all(Array.from({ length: prepared.workers?.count ?? 0 }, startWorker));
    cleanups.unshift(() => {
      stopping = true;
      return Promise.all(workers.map((worker) => stopChild(worker, 'SIGKILL')));
    });
    const proxy = await startChild('./proxy-process.ts', { BACKENDS: JSON.stringify(ports) });
    cleanups.unshift(() => stopChild(proxy, 'SIGKILL'));
    const proxyUrl = `http://127.0.0.1:${proxy.readyLine.split(' ')[1]}`;
    const gateway = await startGateway({
      credits: jobs * 10,
      rateLimit: false,
      maxConcurrentJobs: jobs,
      jobs: {
        stepMs: 1,
        outcome: (job) => (job.prompt.endsWith('7') ? { status: 'failed' } : { status: 'completed' }),
      },
      deliveries: { retryDelaysMs: RETRY_DELAYS_MS, duplicateRate, timeoutMs: ATTEMPT_TIMEOUT_MS },
    });
    cleanups.unshift(() => gateway.close());
    const client = createClient({ apiKey: gateway.apiKey, baseUrl: gateway.baseUrl });
    const url = `${proxyUrl}/webhooks`;
    const events = ['job.completed', 'job.failed'] as const;
    await client.webhooks.create({ url, events: [...events], secret_key: SECRETS[0]! });

    // Milestones, by jobs submitted: the second webhook's life, and the SIGKILL.
    let second: number | undefined;
    let secondDeletedAt = Infinity;
    let restarted: Promise<void> | undefined;
    let disrupted: Promise<void> | undefined;
    let killedWorkerPid: string | undefined;
    let workerRestarted: Promise<void> | undefined;
    const victim = instances[1 % count]!;
    const killedPid = String(victim.child.process.pid);
    const milestones = new Map<number, () => Promise<void>>([
      [
        Math.floor(jobs * 0.3),
        async () => {
          second = (
            await client.webhooks.create({
              url,
              events: [...events],
              secret_key: SECRETS[1]!,
            })
          ).id;
          log(`second webhook ${second} created`);
        },
      ],
      [
        Math.floor(jobs * 0.5),
        async () => {
          await stopChild(victim.child, 'SIGKILL');
          log(`instance ${killedPid} killed`);
          restarted = startInstance(victim.port, prepared.env).then((instance) => {
            instances[instances.indexOf(victim)] = instance;
            log(`instance restarted as ${instance.child.process.pid}`);
          });
        },
      ],
      [
        Math.floor(jobs * 0.55),
        async () => {
          if (!prepared.workers?.kill) return;
          const worker = workers[0]!;
          killedWorkerPid = String(worker.process.pid);
          killing = worker;
          await stopChild(worker, 'SIGKILL');
          log(`worker ${killedWorkerPid} killed`);
          workerRestarted = startWorker().then((started) => {
            workers[0] = started;
            log(`worker restarted as ${started.process.pid}`);
          });
        },
      ],
      [
        Math.floor(jobs * 0.6),
        async () => {
          // Not awaited: submission goes on while the variant breaks and mends its service.
          disrupted = prepared.disrupt?.(log);
        },
      ],
      [
        Math.floor(jobs * 0.7),
        async () => {
          secondDeletedAt = gateway.deliveries.length;
          await client.webhooks.delete(second!);
          log('second webhook deleted');
        },
      ],
    ]);

    let submitted = 0;
    const submittingSince = Date.now();
    const submitOne = async (): Promise<void> => {
      while (submitted < jobs) {
        const n = submitted++;
        // The n-th job waits for its slot: at most `jobsPerSecond` on average.
        const due = submittingSince + (n * 1000) / jobsPerSecond - Date.now();
        if (due > 0) await new Promise((resolve) => setTimeout(resolve, due));
        await milestones.get(n)?.();
        await client.images.generate({ model: 'm', prompt: `job ${n}` });
        if (n % 1000 === 999) log(`${n + 1} jobs submitted`);
      }
    };
    await Promise.all(Array.from({ length: concurrency }, submitOne));
    log(`all jobs submitted after ${((Date.now() - started) / 1000).toFixed(1)} s`);
    await restarted;
    await workerRestarted;
    await disrupted;
    await gateway.settled();
    const drained = (await prepared.drain?.(log)) ?? {};

    const histogram: Record<string, number> = {};
    for (const a of gateway.deliveries) {
      const k = `${a.webhookId}:${a.status ?? a.error}`;
      histogram[k] = (histogram[k] ?? 0) + 1;
    }
    log(`answers by webhook:status ${JSON.stringify(histogram)}`);
    const effects = await prepared.effects();
    const attempts = gateway.deliveries;
    // A delivery's copies: by webhook-id and copy, each with its attempts in order.
    const copies = new Map<string, DeliveryAttempt[]>();
    for (const attempt of attempts) {
      const id = `${attempt.deliveryId}${attempt.duplicate ? '+' : ''}`;
      copies.set(id, [...(copies.get(id) ?? []), attempt]);
    }
    const eventIds = new Set(attempts.map((a) => a.eventId));
    const deliveryIdsOf = new Map<string, Set<string>>();
    for (const a of attempts)
      deliveryIdsOf.set(a.eventId, (deliveryIdsOf.get(a.eventId) ?? new Set()).add(a.deliveryId));
    const unanswered: DeliveryAttempt[] = [];
    let cutByDeletion = 0;
    for (const list of copies.values()) {
      const last = list[list.length - 1]!;
      if (last.ok) continue;
      const cut =
        last.webhookId === second && last.attempt <= RETRY_DELAYS_MS.length && secondDeletedAt < Infinity;
      if (cut) cutByDeletion++;
      else unanswered.push(last);
    }
    const missing = [...eventIds].filter((id) => !effects.has(id));
    const repeated = [...effects]
      .filter(([, pids]) => pids.length > 1)
      .map(([eventId, pids]) => ({ eventId, pids }));
    return {
      jobs,
      events: eventIds.size,
      deliveries: new Set(attempts.map((a) => a.deliveryId)).size,
      duplicatedDeliveries: new Set(attempts.filter((a) => a.duplicate).map((a) => a.deliveryId)).size,
      rotatedEvents: [...deliveryIdsOf.values()].filter((ids) => ids.size > 1).length,
      attempts: attempts.length,
      exactlyOnce: [...eventIds].filter((id) => effects.get(id)?.length === 1).length,
      missing,
      repeated,
      killedPid,
      killedWorkerPid,
      crashedWorkers,
      unanswered,
      cutByDeletion,
      drained,
      seconds: (Date.now() - started) / 1000,
    };
  } finally {
    for (const cleanup of cleanups) await cleanup().catch(() => undefined);
  }
}
