// The reconcile engine on its own (src/reconcile/reconciler.ts), against the real gateway
// simulator and a memory tracker, with the dispatch injected: what it polls, when, what it
// dispatches, how it backs off, and how it keeps off the gateway's rate limit.
import { createClient, type GatewayClient } from 'jobhook/client';
import { memoryJobTracker } from 'jobhook';
import { startGateway, type Gateway } from 'jobhook/testing';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { createReconciler, type DispatchPolled } from '../../src/reconcile/reconciler.js';
import type { EventOutcome } from '../../src/events/event-types.js';
import {
  resolveReconcile,
  type ReconcileOptions,
  type ReconcileObserver,
} from '../../src/reconcile/options.js';
import { safeLogger } from '../../src/common/logging.js';
import { capturingLogger, withoutProcessErrors } from '../support/traffic.js';

let gateway: Gateway;
afterEach(() => gateway?.close());

/** A reconciler on a clock the test moves, with a recorded dispatch that answers `answer`. */
async function setUp(
  options: Partial<ReconcileOptions> & { gateway?: Parameters<typeof startGateway>[0] } = {},
  answer: (taskId: string) => EventOutcome = () => 'handled',
) {
  gateway = await startGateway({ maxConcurrentJobs: 100, credits: 100_000, ...options.gateway });
  const client: GatewayClient = createClient({ baseUrl: gateway.baseUrl, apiKey: gateway.apiKey });
  const jobs = memoryJobTracker();
  const clock = { now: Date.now() };
  const dispatched: Parameters<DispatchPolled>[0][] = [];
  const logger = capturingLogger();
  const observed: { method: string; value: unknown }[] = [];
  const observer: ReconcileObserver = {
    reconciled: (value) => void observed.push({ method: 'reconciled', value }),
    jobExpired: (value) => void observed.push({ method: 'jobExpired', value }),
    deliveriesFailed: (value) => void observed.push({ method: 'deliveriesFailed', value }),
  };
  const reconciler = createReconciler({
    options: resolveReconcile({ client, jobs, afterMs: 1000, intervalMs: 0, ...options }),
    dispatch: async (event) => {
      dispatched.push(event);
      return answer(event.taskId);
    },
    logger: safeLogger(logger),
    observer,
    now: () => clock.now,
  });
  /** Submits `n` jobs as the app would (tracked at submission). */
  const submit = async (n: number, prompt = 'a cat') => {
    const ids: string[] = [];
    for (let i = 0; i < n; i++) {
      const { task_id } = await client.images.generate({ model: 'm', prompt });
      jobs.track(task_id, clock.now);
      ids.push(task_id);
    }
    return ids;
  };
  const polls = () =>
    gateway.requests.filter((r) => r.method === 'GET' && r.path.startsWith('/api/v1/images/'));
  return { client, jobs, clock, dispatched, logger, observed, reconciler, submit, polls };
}

describe('a pass', () => {
  it('polls an overdue task, dispatches its outcome built from the task record, and forgets it', async () => {
    const t = await setUp();
    const [done] = await t.submit(1);
    const [failed] = await t.submit(1, 'please fail');
    await gateway.settled();
    expect(await t.reconciler.reconcileOnce()).toMatchObject({ polled: 0, dispatched: 0 });
    t.clock.now += 1000;
    expect(await t.reconciler.reconcileOnce()).toEqual({
      polled: 2,
      dispatched: 2,
      pending: 0,
      rateLimited: false,
    });
    const byTask = new Map(t.dispatched.map((event) => [event.taskId, event]));
    expect(byTask.get(done!)).toMatchObject({
      type: 'job.completed',
      tenant: undefined,
      payload: {
        id: `poll_${done}`,
        type: 'job.completed',
        created_at: expect.any(String),
        data: { task_id: done, status: 'completed', image_url: expect.stringContaining(done!) },
      },
    });
    expect(byTask.get(failed!)).toMatchObject({
      type: 'job.failed',
      payload: {
        data: { status: 'failed', error: { code: 'generation_failed', message: expect.any(String) } },
      },
    });
    expect(t.jobs.size).toBe(0);
    expect(await t.reconciler.reconcileOnce()).toMatchObject({ polled: 0 });
  });

  it('backs off a task still running, doubling from intervalMs, and dispatches it once it ends', async () => {
    const t = await setUp({ intervalMs: 5000, gateway: { jobs: { auto: false } } });
    const [id] = await t.submit(1);
    t.clock.now += 1000;
    expect(await t.reconciler.reconcileOnce()).toMatchObject({ polled: 1, pending: 1, dispatched: 0 });
    t.clock.now += 4999;
    expect(await t.reconciler.reconcileOnce()).toMatchObject({ polled: 0 });
    t.clock.now += 1;
    expect(await t.reconciler.reconcileOnce()).toMatchObject({ polled: 1, pending: 1 });
    t.clock.now += 9999; // second back-off: 2 x 5 s
    expect(await t.reconciler.reconcileOnce()).toMatchObject({ polled: 0 });
    gateway.advanceJob(id!);
    gateway.advanceJob(id!);
    t.clock.now += 1;
    expect(await t.reconciler.reconcileOnce()).toMatchObject({ polled: 1, dispatched: 1, pending: 0 });
    expect(t.dispatched.map((event) => event.taskId)).toEqual([id]);
  });

  it('forgets a task whose outcome was handled already (the webhook came first), without counting it', async () => {
    const t = await setUp({}, () => 'duplicate');
    await t.submit(1);
    await gateway.settled();
    t.clock.now += 1000;
    expect(await t.reconciler.reconcileOnce()).toMatchObject({ polled: 1, dispatched: 0 });
    expect(t.jobs.size).toBe(0);
  });

  it('polls again later when the handlers failed, or when the outcome is being handled elsewhere', async () => {
    let answer: EventOutcome = 'failed';
    const t = await setUp({ intervalMs: 5000 }, () => answer);
    await t.submit(1);
    await gateway.settled();
    t.clock.now += 1000;
    expect(await t.reconciler.reconcileOnce()).toMatchObject({ polled: 1, dispatched: 0 });
    expect(t.jobs.size).toBe(1);
    answer = 'busy';
    t.clock.now += 5000;
    expect(await t.reconciler.reconcileOnce()).toMatchObject({ polled: 1, dispatched: 0 });
    answer = 'handled';
    t.clock.now += 5000;
    expect(await t.reconciler.reconcileOnce()).toMatchObject({ polled: 1, dispatched: 1 });
    expect(t.jobs.size).toBe(0);
  });

  it('is told when a webhook settled a task, which is then never polled', async () => {
    const t = await setUp();
    const [a, b] = await t.submit(2);
    await gateway.settled();
    await t.reconciler.settled(a!, undefined);
    t.clock.now += 1000;
    expect(await t.reconciler.reconcileOnce()).toMatchObject({ polled: 1, dispatched: 1 });
    expect(t.dispatched.map((event) => event.taskId)).toEqual([b]);
  });

  it('makes at most maxPollsPerPass polls, `concurrency` at a time', async () => {
    const t = await setUp({ maxPollsPerPass: 3, concurrency: 2 });
    await t.submit(7);
    await gateway.settled();
    t.clock.now += 1000;
    let inFlight = 0;
    let most = 0;
    const get = t.client.images.get.bind(t.client.images);
    t.client.images.get = async (...args) => {
      most = Math.max(most, ++inFlight);
      try {
        return await get(...args);
      } finally {
        inFlight--;
      }
    };
    expect(await t.reconciler.reconcileOnce()).toMatchObject({ polled: 3, dispatched: 3 });
    expect(most).toBe(2);
    expect(await t.reconciler.reconcileOnce()).toMatchObject({ polled: 3 });
    expect(await t.reconciler.reconcileOnce()).toMatchObject({ polled: 1 });
  });

  it('hands back, due at once, the tasks it could not start polling within half the lease', async () => {
    const t = await setUp({ concurrency: 1 });
    await t.submit(3);
    await gateway.settled();
    t.clock.now += 1000;
    const get = t.client.images.get.bind(t.client.images);
    t.client.images.get = async (...args) => {
      t.clock.now += t.jobs.leaseMs / 2 + 1; // a slow poll on a loaded machine
      return get(...args);
    };
    expect(await t.reconciler.reconcileOnce()).toMatchObject({ polled: 1, dispatched: 1 });
    expect(t.jobs.size).toBe(2);
    t.client.images.get = get;
    expect(await t.reconciler.reconcileOnce()).toMatchObject({ polled: 2, dispatched: 2 });
  });

  it('forgets a task the gateway does not know (404), with a warning naming it', async () => {
    const t = await setUp();
    t.jobs.track('task_nobody_submitted', t.clock.now);
    t.clock.now += 1000;
    expect(await t.reconciler.reconcileOnce()).toMatchObject({ polled: 1, dispatched: 0 });
    expect(t.jobs.size).toBe(0);
    expect(t.logger.lines.join('\n')).toContain('"task_nobody_submitted" is unknown to the gateway');
  });
});

describe('what a client of your own resolves with', () => {
  // Issue 33: the reconciler takes any ReconcileClient; what it resolves with is never trusted.
  it.each([
    ['undefined', () => undefined],
    ['null', () => null],
    ['an array', () => []],
    [
      'a record whose status throws',
      () =>
        Object.defineProperty({}, 'status', {
          enumerable: true,
          get() {
            throw new Error('no status here');
          },
        }),
    ],
  ])(
    '%s: the pass resolves, the task is released with back-off and polled again later',
    async (_, answer) => {
      const t = await setUp({ intervalMs: 5000 });
      const [id] = await t.submit(1);
      await gateway.settled();
      const get = t.client.images.get.bind(t.client.images);
      t.client.images.get = async (...args) => {
        await get(...args);
        return answer() as never;
      };
      t.clock.now += 1000;
      expect(await t.reconciler.reconcileOnce()).toMatchObject({ polled: 1, dispatched: 0 });
      expect(t.jobs.pending()).toMatchObject([{ taskId: id, polls: 1 }]);
      expect(t.logger.lines.filter((line) => line.includes(id!))).toEqual([
        expect.stringMatching(/^warn jobhook: .*task ".*" .*\(polled again later\)/),
      ]);
      t.client.images.get = get;
      t.clock.now += 4999;
      expect(await t.reconciler.reconcileOnce()).toMatchObject({ polled: 0 });
      t.clock.now += 1;
      expect(await t.reconciler.reconcileOnce()).toMatchObject({ polled: 1, dispatched: 1 });
    },
  );
});

describe('the rate limit', () => {
  it('stops the pass at the first 429, makes no further request until Retry-After has passed, then goes on', async () => {
    const t = await setUp({ concurrency: 1 });
    await t.submit(5);
    await gateway.settled();
    const before = t.polls().length;
    gateway.failNext({ status: 429, retryAfterSeconds: 7, method: 'GET' });
    t.clock.now += 1000;
    expect(await t.reconciler.reconcileOnce()).toMatchObject({ polled: 1, dispatched: 0, rateLimited: true });
    expect(t.polls().length - before).toBe(1);
    t.clock.now += 6999;
    expect(await t.reconciler.reconcileOnce()).toMatchObject({ polled: 0, rateLimited: true });
    expect(t.polls().length - before).toBe(1);
    t.clock.now += 1;
    expect(await t.reconciler.reconcileOnce()).toMatchObject({
      polled: 5,
      dispatched: 5,
      rateLimited: false,
    });
    expect(t.logger.lines.filter((line) => line.includes('429'))).toHaveLength(1);
  });

  it('makes no more than its concurrency of polls once one got 429', async () => {
    const t = await setUp({ concurrency: 2 });
    await t.submit(6);
    await gateway.settled();
    const before = t.polls().length;
    gateway.failNext({ status: 429, method: 'GET', times: 100 });
    t.clock.now += 1000;
    expect(await t.reconciler.reconcileOnce()).toMatchObject({ rateLimited: true, dispatched: 0 });
    expect(t.polls().length - before).toBeLessThanOrEqual(2);
    expect(t.jobs.size).toBe(6);
  });
});

describe('age', () => {
  it('reports a task still running at maxAgeMs (warn and observer), forgets it, and makes up no outcome', async () => {
    gateway = await startGateway({ jobs: { auto: false } });
    const client = createClient({ baseUrl: gateway.baseUrl, apiKey: gateway.apiKey });
    const jobs = memoryJobTracker({ maxAgeMs: 60_000 });
    const logger = capturingLogger();
    const expired: unknown[] = [];
    let now = Date.now();
    const dispatched: unknown[] = [];
    const reconciler = createReconciler({
      options: resolveReconcile({ client, jobs, afterMs: 1000, intervalMs: 0 }),
      dispatch: async (event) => {
        dispatched.push(event);
        return 'handled';
      },
      logger: safeLogger(logger),
      observer: { jobExpired: (job) => void expired.push(job) },
      now: () => now,
    });
    const { task_id } = await client.images.generate({ model: 'm', prompt: 'slow' });
    jobs.track(task_id, now);
    now += 60_000;
    expect(await reconciler.reconcileOnce()).toMatchObject({ polled: 1, dispatched: 0, pending: 0 });
    expect(dispatched).toEqual([]);
    expect(jobs.size).toBe(0);
    expect(expired).toEqual([{ taskId: task_id, status: 'pending', ageMs: 60_000 }]);
    expect(logger.lines.join('\n')).toMatch(new RegExp(`warn .*"${task_id}" is still pending`));
  });
});

describe('the timer', () => {
  it('never keeps a process alive by itself (unref)', async () => {
    const { execFile } = await import('node:child_process');
    const { promisify } = await import('node:util');
    const script = fileURLToPath(new URL('./timer-only.ts', import.meta.url));
    const started = Date.now();
    // Killed (and so rejected) at 30 s should the timer hold the process.
    const { stdout } = await promisify(execFile)(process.execPath, ['--import', 'tsx', script], {
      timeout: 30_000,
    });
    expect(stdout).toContain('created');
    expect(Date.now() - started).toBeLessThan(30_000); // the timer is 60 s: it did not hold the exit
  });

  it('logs a pass that rejected rather than leave it unhandled (which would end the process)', async () => {
    gateway = await startGateway();
    const client = createClient({ baseUrl: gateway.baseUrl, apiKey: gateway.apiKey });
    const broken = { ...memoryJobTracker(), claimDue: () => 42 as never };
    const logger = capturingLogger();
    const { errors } = await withoutProcessErrors(async () => {
      const reconciler = createReconciler({
        options: resolveReconcile({ client, jobs: broken, intervalMs: 5 }),
        dispatch: async () => 'handled',
        logger: safeLogger(logger),
        now: Date.now,
      });
      await expect.poll(() => logger.lines.length).toBeGreaterThan(0);
      await reconciler.close();
    });
    expect(errors).toEqual([]);
    expect(logger.lines).toEqual([expect.stringMatching(/^warn jobhook: a reconcile pass failed: /)]);
  });

  it('runs passes every intervalMs until close(), which stops it and waits for the running pass', async () => {
    gateway = await startGateway();
    const client = createClient({ baseUrl: gateway.baseUrl, apiKey: gateway.apiKey });
    const jobs = memoryJobTracker();
    const passes: unknown[] = [];
    const reconciler = createReconciler({
      options: resolveReconcile({ client, jobs, afterMs: 0, intervalMs: 20 }),
      dispatch: async () => 'handled',
      logger: safeLogger(capturingLogger()),
      observer: { reconciled: (pass) => void passes.push(pass) },
      now: Date.now,
    });
    const { task_id } = await client.images.generate({ model: 'm', prompt: 'a cat' });
    await gateway.settled();
    jobs.track(task_id);
    await expect.poll(() => jobs.size).toBe(0);
    await reconciler.close();
    const count = passes.length;
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(passes.length).toBe(count);
  });
});
