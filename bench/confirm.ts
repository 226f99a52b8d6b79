/**
 * Confirm mode (issue 43): what asking the gateway costs.
 *
 * - GETs per delivery, one task: 100 concurrent unsigned hints for one finished task, tracked;
 *   the task GETs the simulator answered, per round.
 * - GETs per task, many: N jobs through a client with a tracker, the simulator delivering each
 *   outcome unsigned (10 % sent twice at once) to a receiver with `confirm` and a reconciler running
 *   over HTTP; every task GET the simulator answered, once every outcome is handled.
 * - Added latency: `receive()` of a signed delivery of a finished task, one at a time, with
 *   `confirm` (the signature, then a GET over loopback) against the signature alone; p50 and p99.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { SECRET } from './fixtures.js';
import {
  createClient,
  createReceiver,
  memoryJobTracker,
  nodeHandler,
  signDelivery,
  startGateway,
} from './jobhook.js';

export interface ConfirmBenchOptions {
  rounds: number;
  tasks: number;
  latencyDeliveries: number;
}

export interface ConfirmResults {
  options: ConfirmBenchOptions;
  /** Task GETs for 100 concurrent hints of one task, per round. */
  oneTask: number[];
  /** The many-tasks run: tasks, deliveries attempted, task GETs, handler runs. */
  manyTasks: { tasks: number; deliveries: number; gets: number; runs: number };
  /** µs per answer: the signature alone, and the signature and the confirmation. */
  latency: Record<'signature' | 'confirm', { p50: number; p99: number }>;
}

const HINTS = 100;

const taskGets = (requests: readonly { method: string; path: string }[]) =>
  requests.filter((r) => r.method === 'GET' && r.path.startsWith('/api/v1/images/')).length;

function hint(taskId: string) {
  return {
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({
      id: `evt_${taskId}`,
      type: 'job.completed',
      created_at: new Date().toISOString(),
      data: { task_id: taskId, status: 'completed', image_url: 'https://images.example/hint.png' },
    }),
  };
}

async function finished(client: ReturnType<typeof createClient>, count: number): Promise<string[]> {
  const ids: string[] = [];
  for (let i = 0; i < count; i++)
    ids.push((await client.images.generate({ model: 'm', prompt: `cat ${i}` })).task_id);
  for (const id of ids) await client.images.waitFor(id, { pollIntervalMs: 5 });
  return ids;
}

async function oneTask(rounds: number): Promise<number[]> {
  const gateway = await startGateway({ rateLimit: false, credits: 1e9, maxConcurrentJobs: 10_000 });
  try {
    const jobs = memoryJobTracker();
    const client = createClient({ baseUrl: gateway.baseUrl, apiKey: gateway.apiKey, jobs, retries: 0 });
    const receiver = createReceiver({ confirm: { client, jobs }, logger: quiet });
    receiver.onJobCompleted(() => undefined);
    const ids = await finished(client, rounds);
    const counts: number[] = [];
    for (const id of ids) {
      const before = taskGets(gateway.requests);
      await Promise.all(Array.from({ length: HINTS }, () => receiver.receive(hint(id))));
      counts.push(taskGets(gateway.requests) - before);
    }
    await receiver.close();
    return counts;
  } finally {
    await gateway.close();
  }
}

async function manyTasks(tasks: number): Promise<ConfirmResults['manyTasks']> {
  const gateway = await startGateway({
    rateLimit: false,
    credits: 1e9,
    maxConcurrentJobs: tasks * 2,
    signing: 'unsigned',
    deliveries: { duplicateRate: 0.1 },
  });
  const jobs = memoryJobTracker();
  const client = createClient({ baseUrl: gateway.baseUrl, apiKey: gateway.apiKey, jobs, retries: 0 });
  let runs = 0;
  const receiver = createReceiver({
    confirm: { client },
    reconcile: { client, jobs, afterMs: 1_000, intervalMs: 100 },
    logger: quiet,
  });
  receiver.onJobCompleted(() => void runs++).onJobFailed(() => void runs++);
  const server = createServer(nodeHandler(receiver));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/`;
  try {
    await client.webhooks.create({ url, events: ['job.completed', 'job.failed'], secret_key: SECRET });
    const before = taskGets(gateway.requests);
    let next = 0;
    await Promise.all(
      Array.from({ length: 16 }, async () => {
        while (next < tasks) {
          next++;
          await client.images.generate({ model: 'm', prompt: 'a cat' });
        }
      }),
    );
    await gateway.settled();
    // Past the reconciler's afterMs and a few of its passes: a poll it would make is counted.
    await new Promise((resolve) => setTimeout(resolve, 1_500));
    return { tasks, deliveries: gateway.deliveries.length, gets: taskGets(gateway.requests) - before, runs };
  } finally {
    await receiver.close();
    await new Promise((resolve) => server.close(resolve));
    await gateway.close();
  }
}

async function latency(count: number, rounds: number): Promise<ConfirmResults['latency']> {
  const gateway = await startGateway({ rateLimit: false, credits: 1e9, maxConcurrentJobs: 10_000 });
  try {
    const jobs = memoryJobTracker();
    const client = createClient({ baseUrl: gateway.baseUrl, apiKey: gateway.apiKey, jobs, retries: 0 });
    const ids = await finished(client, count);
    const samples: Record<'signature' | 'confirm', number[]> = { signature: [], confirm: [] };
    for (let round = 0; round < rounds; round++) {
      // A fresh receiver (and dedupe memory) per round and kind: every delivery is a first one.
      for (const kind of round % 2
        ? (['confirm', 'signature'] as const)
        : (['signature', 'confirm'] as const)) {
        const receiver = createReceiver(
          kind === 'confirm'
            ? { secret: SECRET, confirm: { client, jobs }, logger: quiet }
            : { secret: SECRET, logger: quiet },
        );
        receiver.onJobCompleted(() => undefined);
        // A receiver without a reconciler forgets a task once confirmed: tracked again for this round.
        for (const id of ids) jobs.track(id);
        for (const id of ids) {
          const delivery = signDelivery({
            secret: SECRET,
            payload: {
              id: `evt_${id}`,
              type: 'job.completed',
              created_at: new Date().toISOString(),
              data: { task_id: id, status: 'completed', image_url: 'https://images.example/x.png' },
            },
          });
          const started = performance.now();
          const answer = await receiver.receive(delivery);
          samples[kind].push((performance.now() - started) * 1000);
          if (answer.status !== 200) throw new Error(`bench confirm: ${kind} answered ${answer.status}`);
        }
        await receiver.close();
      }
    }
    return { signature: percentiles(samples.signature), confirm: percentiles(samples.confirm) };
  } finally {
    await gateway.close();
  }
}

function percentiles(values: number[]): { p50: number; p99: number } {
  const sorted = [...values].sort((a, b) => a - b);
  const at = (q: number) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]!;
  return { p50: at(0.5), p99: at(0.99) };
}

const quiet = { error: () => undefined, warn: () => undefined };

export async function runConfirm(options: ConfirmBenchOptions): Promise<ConfirmResults> {
  return {
    options,
    oneTask: await oneTask(options.rounds),
    manyTasks: await manyTasks(options.tasks),
    latency: await latency(options.latencyDeliveries, options.rounds),
  };
}

export function confirmSection(r: ConfirmResults): string[] {
  const { manyTasks: many, latency: l } = r;
  const us = (value: number) => `${value.toFixed(0)} µs`;
  return [
    '## Confirm mode',
    '',
    `Task GETs the simulator answered (target: 1 for ${HINTS} concurrent hints of one task; at most 1.02 a task for many):`,
    '',
    '| case | GETs |',
    '| --- | --- |',
    `| ${HINTS} concurrent hints of one task, ${r.oneTask.length} rounds | ${r.oneTask.join(', ')} |`,
    `| ${many.tasks} tasks, ${many.deliveries} deliveries (10 % sent twice at once), a reconciler running | ${many.gets} (${(many.gets / many.tasks).toFixed(3)} a task; ${many.runs} handler runs) |`,
    '',
    `Added latency of an answer, \`receive()\` of a signed delivery, one at a time, ${r.options.latencyDeliveries} tasks × ${r.options.rounds} rounds:`,
    '',
    '| | p50 | p99 |',
    '| --- | --- | --- |',
    `| signature alone | ${us(l.signature.p50)} | ${us(l.signature.p99)} |`,
    `| signature, then the GET (confirm) | ${us(l.confirm.p50)} | ${us(l.confirm.p99)} |`,
    `| added | ${us(l.confirm.p50 - l.signature.p50)} | ${us(l.confirm.p99 - l.signature.p99)} |`,
    '',
  ];
}
