// The many-instances scenario: three receiver processes behind a round-robin proxy, the gateway
// simulator sending many jobs with duplicate deliveries, a second webhook for the same URL for
// part of the run (one event under two delivery ids), and one process killed with SIGKILL
// mid-run and restarted. It returns what happened; the test decides what must hold.
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { fileURLToPath } from 'node:url';
import { createClient } from 'jobhook/client';
import { startGateway, type DeliveryAttempt } from 'jobhook/testing';
import { freePort } from '../support/services.js';
import { startProxy } from './proxy.js';
import type { Variant } from './variants.js';

const root = fileURLToPath(new URL('../..', import.meta.url));
const script = fileURLToPath(new URL('./instance.ts', import.meta.url));
const secret = (name: string) =>
  `whsec_${Buffer.from(`many-instances-${name}-secret-32b`).toString('base64')}`;
const SECRETS = [secret('first'), secret('second')];

/** Claims of a killed process block their events this long; the retries below outlast it. */
const LEASE_MS = 1000;
const RETRY_DELAYS_MS = [100, 200, 400, 800, 1000, 1500, 2000, 2000];

export interface ScenarioOptions {
  jobs: number;
  /** Share of deliveries the gateway sends twice. */
  duplicateRate: number;
  instances?: number;
  /** Jobs submitted at once. */
  concurrency?: number;
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
  /** Deliveries whose last attempt failed although their webhook still existed. */
  unanswered: DeliveryAttempt[];
  /** Deliveries to the second webhook that stopped when it was deleted (the gateway stops retrying). */
  cutByDeletion: number;
  seconds: number;
}

interface Instance {
  port: number;
  child: ChildProcess;
}

async function startInstance(port: number, env: Record<string, string>): Promise<Instance> {
  const child = spawn(process.execPath, ['--import', 'tsx', script], {
    cwd: root,
    env: {
      ...process.env,
      ...env,
      PORT: String(port),
      SECRETS: JSON.stringify(SECRETS),
      LEASE_MS: String(LEASE_MS),
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stderr.on('data', (data: Buffer) => (output += data.toString()));
  await new Promise<void>((resolve, reject) => {
    const onData = (data: Buffer) => {
      output += data.toString();
      if (output.includes('listening')) {
        child.stdout.off('data', onData);
        child.stdout.resume();
        resolve();
      }
    };
    child.stdout.on('data', onData);
    child.once('exit', (code) => reject(new Error(`instance on port ${port} exited (${code}): ${output}`)));
  });
  return { port, child };
}

async function stopInstance(instance: Instance, signal: NodeJS.Signals) {
  const { child } = instance;
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = once(child, 'exit');
  child.kill(signal);
  await exited;
}

export async function runScenario(variant: Variant, options: ScenarioOptions): Promise<ScenarioResult> {
  const { jobs, duplicateRate, instances: count = 3, concurrency = 16, log = () => undefined } = options;
  const started = Date.now();
  const prepared = await variant.prepare();
  const instances: Instance[] = [];
  const cleanups: (() => Promise<unknown>)[] = [() => prepared.cleanup()];
  try {
    const ports = await Promise.all(Array.from({ length: count }, () => freePort()));
    instances.push(...(await Promise.all(ports.map((port) => startInstance(port, prepared.env)))));
    cleanups.unshift(() => Promise.all(instances.map((instance) => stopInstance(instance, 'SIGKILL'))));
    const proxy = await startProxy(ports);
    cleanups.unshift(() => proxy.close());
    const gateway = await startGateway({
      credits: jobs * 10,
      rateLimit: false,
      maxConcurrentJobs: jobs,
      jobs: {
        stepMs: 1,
        outcome: (job) => (job.prompt.endsWith('7') ? { status: 'failed' } : { status: 'completed' }),
      },
      deliveries: { retryDelaysMs: RETRY_DELAYS_MS, duplicateRate },
    });
    cleanups.unshift(() => gateway.close());
    const client = createClient({ apiKey: gateway.apiKey, baseUrl: gateway.baseUrl });
    const url = `${proxy.url}/webhooks`;
    const events = ['job.completed', 'job.failed'] as const;
    await client.webhooks.create({ url, events: [...events], secret_key: SECRETS[0]! });

    // Milestones, by jobs submitted: the second webhook's life, and the SIGKILL.
    let second: number | undefined;
    let secondDeletedAt = Infinity;
    let restarted: Promise<void> | undefined;
    const victim = instances[1 % count]!;
    const killedPid = String(victim.child.pid);
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
          await stopInstance(victim, 'SIGKILL');
          log(`instance ${killedPid} killed`);
          restarted = startInstance(victim.port, prepared.env).then((instance) => {
            instances[instances.indexOf(victim)] = instance;
            log(`instance restarted as ${instance.child.pid}`);
          });
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
    const submitOne = async (): Promise<void> => {
      while (submitted < jobs) {
        const n = submitted++;
        await milestones.get(n)?.();
        await client.images.generate({ model: 'm', prompt: `job ${n}` });
        if (n % 1000 === 999) log(`${n + 1} jobs submitted`);
      }
    };
    await Promise.all(Array.from({ length: concurrency }, submitOne));
    log(`all jobs submitted after ${((Date.now() - started) / 1000).toFixed(1)} s`);
    await restarted;
    await gateway.settled();

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
      unanswered,
      cutByDeletion,
      seconds: (Date.now() - started) / 1000,
    };
  } finally {
    for (const cleanup of cleanups) await cleanup().catch(() => undefined);
  }
}
