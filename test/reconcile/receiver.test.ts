// createReceiver({ reconcile }) over real HTTP against the gateway simulator: the webhook and the
// poll converge on one key per task outcome, so the handlers run once whichever comes first,
// and an outcome found by poll is marked `source: 'poll'`.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createReceiver, memoryDedupeStore, memoryJobTracker } from 'jobhook';
import { createClient, type GatewayClient } from 'jobhook/client';
import { nodeHandler } from 'jobhook/node';
import { signDelivery, startGateway, type Gateway, type GatewayOptions } from 'jobhook/testing';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { deferred, SECRET } from '../support/deliveries.js';

let gateway: Gateway;
const closers: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const close of closers.splice(0).reverse()) await close();
  await gateway?.close();
  gateway = undefined as never; // the next test starts its own
});

interface Run {
  taskId: string;
  source: string;
  eventId: string;
}

/** A receiver (with reconcile) mounted on a server of its own, recording each handler run. */
async function setUp(options: {
  gateway?: GatewayOptions;
  reconcile?: { afterMs?: number; intervalMs?: number };
  handler?: (run: Run) => unknown;
  jobs?: ReturnType<typeof memoryJobTracker>;
  dedupe?: ReturnType<typeof memoryDedupeStore>;
}) {
  gateway ??= await startGateway({ maxConcurrentJobs: 2000, credits: 1_000_000, ...options.gateway });
  const jobs = options.jobs ?? memoryJobTracker();
  const client: GatewayClient = createClient({ baseUrl: gateway.baseUrl, apiKey: gateway.apiKey, jobs });
  const runs: Run[] = [];
  const receiver = createReceiver({
    secret: SECRET,
    dedupe: options.dedupe ?? memoryDedupeStore(),
    reconcile: { client, jobs, afterMs: 0, intervalMs: 0, ...options.reconcile },
  });
  const handle = async (event: { id: string; data: { task_id: string } }, context: { source: string }) => {
    const run = { taskId: event.data.task_id, source: context.source, eventId: event.id };
    runs.push(run);
    await options.handler?.(run);
  };
  receiver.onJobCompleted(handle).onJobFailed(handle);
  const server: Server = createServer(nodeHandler(receiver, { path: '/webhooks' }));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/webhooks`;
  closers.push(
    () => receiver.close(),
    () => new Promise((resolve) => server.close(resolve)),
  );
  return { jobs, client, runs, receiver, url };
}

/** Sends the webhook of a finished task by hand: what a late (or the first) delivery carries. */
async function sendWebhook(url: string, taskId: string) {
  const task = (await createClient({ baseUrl: gateway.baseUrl, apiKey: gateway.apiKey }).images.get(
    taskId,
  )) as {
    image_url: string;
  };
  const delivery = signDelivery({
    secret: SECRET,
    payload: {
      id: `evt_late_${taskId}`,
      type: 'job.completed',
      created_at: new Date().toISOString(),
      data: { task_id: taskId, status: 'completed', image_url: task.image_url },
    },
  });
  const answer = await fetch(url, {
    method: 'POST',
    headers: delivery.headers,
    body: delivery.body as BodyInit,
  });
  return { status: answer.status, body: (await answer.json()) as unknown };
}

describe('exactly once, whichever comes first', () => {
  it('a late webhook after the poll handled the outcome: 200 duplicate, no second run', async () => {
    const t = await setUp({ gateway: { deliveries: { dropRate: 1, retryDelaysMs: [] } } });
    const { task_id } = await t.client.images.generate({ model: 'm', prompt: 'a cat' });
    await gateway.settled();
    expect(await t.receiver.reconcileOnce()).toMatchObject({ polled: 1, dispatched: 1 });
    expect(t.runs).toEqual([{ taskId: task_id, source: 'poll', eventId: `poll_${task_id}` }]);
    const late = await sendWebhook(t.url, task_id);
    expect(late.status).toBe(200);
    expect(t.runs).toHaveLength(1);
  });

  it('a poll after the webhook handled the outcome: the task is not polled, and a forced poll runs nothing', async () => {
    const t = await setUp({ gateway: { deliveries: { retryDelaysMs: [] } } });
    await t.receiver.register({ client: t.client, url: t.url });
    const { task_id } = await t.client.images.generate({ model: 'm', prompt: 'a cat' });
    await gateway.settled();
    await expect.poll(() => t.runs.length).toBe(1);
    expect(t.runs[0]).toMatchObject({ taskId: task_id, source: 'webhook' });
    await expect.poll(() => t.jobs.size).toBe(0);
    expect(await t.receiver.reconcileOnce()).toMatchObject({ polled: 0 });
    // Tracked again (a webhook that beat generate()'s answer leaves it so): polled, found done.
    t.jobs.track(task_id, 0);
    expect(await t.receiver.reconcileOnce()).toMatchObject({ polled: 1, dispatched: 0 });
    expect(t.runs).toHaveLength(1);
    expect(t.jobs.size).toBe(0);
  });

  it('the webhook and the poll at once on two instances: the handlers run once', async () => {
    const dedupe = memoryDedupeStore();
    const jobs = memoryJobTracker();
    const release = deferred();
    const entered = deferred();
    const slow = async () => {
      entered.resolve();
      await release.promise;
    };
    const a = await setUp({
      gateway: { deliveries: { dropRate: 1, retryDelaysMs: [] } },
      dedupe,
      jobs,
      handler: slow,
    });
    const b = await setUp({ dedupe, jobs, handler: slow });
    const { task_id } = await a.client.images.generate({ model: 'm', prompt: 'a cat' });
    await gateway.settled();
    const polled = a.receiver.reconcileOnce();
    await entered.promise; // the poll's handler is running on instance a
    const webhook = await sendWebhook(b.url, task_id); // the webhook reaches instance b meanwhile
    expect(webhook.status).toBe(409); // being handled: the gateway retries it later
    release.resolve();
    expect(await polled).toMatchObject({ dispatched: 1 });
    expect(await sendWebhook(b.url, task_id)).toMatchObject({ status: 200 });
    expect([...a.runs, ...b.runs]).toHaveLength(1);
    expect(jobs.size).toBe(0);
  });
});

describe('end to end', () => {
  it('handles 1,000 jobs exactly once with half the deliveries dropped and no retries; polled ones marked', async () => {
    const t = await setUp({
      gateway: {
        rateLimit: { requests: 5000, windowMs: 60_000 },
        jobs: { stepMs: 1 },
        deliveries: { dropRate: 0.5, retryDelaysMs: [] },
      },
      reconcile: { afterMs: 500, intervalMs: 100 },
    });
    await t.receiver.register({ client: t.client, url: t.url });
    const tasks: string[] = [];
    let n = 0;
    const submit = async () => {
      while (n < 1000) {
        const i = n++;
        tasks.push(
          (await t.client.images.generate({ model: 'm', prompt: i % 7 === 0 ? 'fail' : 'a cat' })).task_id,
        );
      }
    };
    await Promise.all(Array.from({ length: 16 }, submit));
    await gateway.settled();
    await expect.poll(() => t.jobs.size, { timeout: 60_000, interval: 100 }).toBe(0);
    const counts = new Map<string, Run[]>();
    for (const run of t.runs) counts.set(run.taskId, [...(counts.get(run.taskId) ?? []), run]);
    expect(tasks.filter((task) => counts.get(task)?.length !== 1)).toEqual([]);
    expect(counts.size).toBe(1000);
    const dropped = new Set(gateway.dropped.map((drop) => drop.taskId));
    expect(dropped.size).toBeGreaterThan(300);
    for (const task of dropped) expect(counts.get(task)![0]!.source).toBe('poll');
    const byPoll = t.runs.filter((run) => run.source === 'poll').length;
    expect(byPoll).toBeGreaterThanOrEqual(dropped.size);
    expect(gateway.requests.filter((r) => r.status === 429)).toEqual([]);
    console.log(
      `1,000 jobs: ${dropped.size} deliveries dropped, ${byPoll} outcomes by poll, ` +
        `${gateway.requests.filter((r) => r.method === 'GET' && r.path.startsWith('/api/v1/images/')).length} polls`,
    );
  }, 120_000);
});

describe('waits on a reconciling receiver', () => {
  it('with every webhook lost, the poll that handles the outcome wakes the wait: one status poll in all', async () => {
    const t = await setUp({
      gateway: { deliveries: { dropRate: 1, retryDelaysMs: [] } },
      reconcile: { afterMs: 200, intervalMs: 100 },
    });
    const waited = t.client.images.generateAndWait({ model: 'm', prompt: 'a cat' }, { receiver: t.receiver });
    const task = await waited;
    // The wait wakes once the result is recorded, before the handlers run (and the task's outcome is marked).
    await vi.waitFor(() => expect(t.runs).toHaveLength(1));
    expect(t.runs).toEqual([{ taskId: task.task_id, source: 'poll', eventId: `poll_${task.task_id}` }]);
    // The wait's own first poll would come 5 s after the submission: it never had to ask.
    const polls = gateway.requests.filter(
      (r) => r.method === 'GET' && r.path === `/api/v1/images/${task.task_id}`,
    );
    expect(polls).toHaveLength(1);
  });

  it('a wait whose poll comes due while the reconciler polls the task joins that poll', async () => {
    const t = await setUp({ gateway: { deliveries: { dropRate: 1, retryDelaysMs: [] } } });
    const { task_id } = await t.client.images.generate({ model: 'm', prompt: 'a cat' });
    await gateway.settled();
    const reconciling = t.receiver.reconcileOnce();
    // The wait starts while the reconciler's poll is in flight and would poll at once.
    const task = await t.client.images.waitFor(task_id, { receiver: t.receiver });
    await reconciling;
    expect(task.task_id).toBe(task_id);
    const polls = gateway.requests.filter(
      (r) => r.method === 'GET' && r.path === `/api/v1/images/${task_id}`,
    );
    expect(polls).toHaveLength(1);
  });
});
