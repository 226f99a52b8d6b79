// Issue 33: a receiver with `reconcile` against a gateway that answers what no gateway should, over
// real HTTP on 127.0.0.1: a status poll with no task record, and 429s whose Retry-After is absurd.
// Nothing it sends may throw out of reconcileOnce() or the timer; the task stays tracked, and a
// rate-limit pause lasts at most MAX_RATE_LIMIT_PAUSE_MS.
import { once } from 'node:events';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createReceiver, memoryJobTracker } from 'jobhook';
import { createClient } from 'jobhook/client';
import { afterEach, describe, expect, it } from 'vitest';
import { MAX_RATE_LIMIT_PAUSE_MS } from '../../src/reconcile/gateway.js';
import { SECRET } from '../fixtures.js';
import { capturingLogger, withoutProcessErrors } from '../support/traffic.js';

const API_KEY = 'sk_live_reconcile_hostile_gateway_key_0123';
const TASK = 'task_hostile_1';
const T0 = Date.UTC(2030, 0, 1);

const closers: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const close of closers.splice(0).reverse()) await close();
});

type Answer = { status: number; headers?: Record<string, string>; body: string };

/** A real HTTP server answering each request with `answer`; records each request's path. */
async function gatewayServer(answer: (req: IncomingMessage) => Answer) {
  const paths: string[] = [];
  const server: Server = createServer((req: IncomingMessage, res: ServerResponse) => {
    paths.push(req.url!);
    const { status, headers, body } = answer(req);
    res.writeHead(status, { 'content-type': 'application/json', ...headers }).end(body);
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  closers.push(async () => {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  });
  const polls = () => paths.filter((path) => path.startsWith('/api/v1/images/')).length;
  const lists = () => paths.filter((path) => path.startsWith('/api/v1/webhooks')).length;
  return { baseUrl: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, polls, lists };
}

const completed = JSON.stringify({
  success: true,
  data: { task_id: TASK, status: 'completed', image_url: 'https://img.example/1.png' },
});

/** A receiver reconciling one overdue task through `baseUrl`, on a clock the test moves. */
function receiverOn(baseUrl: string, reconcile: { intervalMs?: number; webhookUrl?: string } = {}) {
  const jobs = memoryJobTracker();
  const clock = { now: T0 };
  const logger = capturingLogger();
  const handled: string[] = [];
  const receiver = createReceiver({
    secret: SECRET,
    logger,
    now: () => clock.now,
    reconcile: {
      client: createClient({ baseUrl, apiKey: API_KEY }),
      jobs,
      afterMs: 0,
      intervalMs: 0,
      ...reconcile,
    },
  }).onJobCompleted((event) => void handled.push(event.data.task_id));
  closers.push(() => receiver.close());
  jobs.track(TASK, T0 - 60_000);
  return { jobs, clock, logger, handled, receiver };
}

describe('a status poll answered with no task record', () => {
  const shapes = [
    ['no data', '{"success":true}'],
    ['data: null', '{"success":true,"data":null}'],
    ['data: an array', '{"success":true,"data":[]}'],
    ['data: a string', '{"success":true,"data":"completed"}'],
  ] as const;

  it.each(shapes)(
    '%s: reconcileOnce() resolves, warns naming the task (never the key), keeps the task',
    async (_, body) => {
      const gateway = await gatewayServer(() => ({ status: 200, body }));
      const t = receiverOn(gateway.baseUrl);
      const { result, errors } = await withoutProcessErrors(() => t.receiver.reconcileOnce());
      expect(errors).toEqual([]);
      expect(result).toMatchObject({ polled: 1, dispatched: 0 });
      expect(gateway.polls()).toBe(1);
      expect(t.jobs.pending().map((job) => job.taskId)).toEqual([TASK]);
      const warnings = t.logger.lines.filter((line) => line.includes(TASK));
      expect(warnings).toHaveLength(1);
      expect(warnings[0]).toMatch(/^warn .*invalid_response/);
      expect(t.logger.lines.join('\n')).not.toContain(API_KEY);
      // Released with back-off: polled again later, not at once.
      expect(await t.receiver.reconcileOnce()).toMatchObject({ polled: 0 });
    },
  );

  it('the timer keeps running its passes: no unhandled rejection, the task still tracked', async () => {
    const gateway = await gatewayServer(() => ({ status: 200, body: '{"success":true,"data":null}' }));
    const t = receiverOn(gateway.baseUrl, { intervalMs: 5 });
    const { errors } = await withoutProcessErrors(async () => {
      // Each pass finds the task due again: the clock moves past any back-off.
      const moving = setInterval(() => (t.clock.now += 3_600_000), 2);
      try {
        await expect.poll(() => gateway.polls(), { timeout: 10_000 }).toBeGreaterThanOrEqual(3);
      } finally {
        clearInterval(moving);
      }
      await t.receiver.close();
    });
    expect(errors).toEqual([]);
    expect(t.jobs.size).toBe(1);
  });
});

describe('a 429 with an absurd Retry-After', () => {
  const values = [
    ['9999999999999 s', '9999999999999'],
    ['a year of seconds', '31536000'],
    ['400 digits', '9'.repeat(400)],
    ['an HTTP date in 2100', 'Fri, 01 Jan 2100 00:00:00 GMT'],
  ] as const;

  it.each(values)(
    '%s, on a status poll: pauses MAX_RATE_LIMIT_PAUSE_MS, then polls again',
    async (_, retryAfter) => {
      let limited = true;
      const gateway = await gatewayServer(() =>
        limited
          ? { status: 429, headers: { 'retry-after': retryAfter }, body: '{"success":false}' }
          : { status: 200, body: completed },
      );
      const t = receiverOn(gateway.baseUrl);
      const { result, errors } = await withoutProcessErrors(() => t.receiver.reconcileOnce());
      expect(errors).toEqual([]);
      expect(result).toMatchObject({ polled: 1, rateLimited: true });
      const until = new Date(T0 + MAX_RATE_LIMIT_PAUSE_MS).toISOString();
      expect(t.logger.lines.filter((line) => line.includes('429'))).toEqual([
        expect.stringContaining(`pauses until ${until}`),
      ]);
      limited = false;
      t.clock.now = T0 + MAX_RATE_LIMIT_PAUSE_MS - 1;
      expect(await t.receiver.reconcileOnce()).toMatchObject({ polled: 0, rateLimited: true });
      expect(gateway.polls()).toBe(1);
      t.clock.now = T0 + MAX_RATE_LIMIT_PAUSE_MS;
      expect(await t.receiver.reconcileOnce()).toMatchObject({ polled: 1, dispatched: 1 });
      expect(t.handled).toEqual([TASK]);
    },
  );

  it.each(values)(
    '%s, on the delivery counters: pauses MAX_RATE_LIMIT_PAUSE_MS, then reads and polls again',
    async (_, retryAfter) => {
      let limited = true;
      const gateway = await gatewayServer((req) => {
        if (req.url!.startsWith('/api/v1/webhooks')) {
          return limited
            ? { status: 429, headers: { 'retry-after': retryAfter }, body: '{"success":false}' }
            : { status: 200, body: '{"success":true,"data":[]}' };
        }
        return { status: 200, body: completed };
      });
      const t = receiverOn(gateway.baseUrl, { webhookUrl: 'https://my.app/webhooks' });
      const { result, errors } = await withoutProcessErrors(() => t.receiver.reconcileOnce());
      expect(errors).toEqual([]);
      expect(result).toMatchObject({ polled: 0, rateLimited: true });
      const until = new Date(T0 + MAX_RATE_LIMIT_PAUSE_MS).toISOString();
      expect(t.logger.lines.filter((line) => line.includes('429'))).toEqual([
        expect.stringContaining(`pauses until ${until}`),
      ]);
      limited = false;
      t.clock.now = T0 + MAX_RATE_LIMIT_PAUSE_MS - 1;
      expect(await t.receiver.reconcileOnce()).toMatchObject({ polled: 0, rateLimited: true });
      expect([gateway.lists(), gateway.polls()]).toEqual([1, 0]);
      t.clock.now = T0 + MAX_RATE_LIMIT_PAUSE_MS;
      expect(await t.receiver.reconcileOnce()).toMatchObject({ polled: 1, dispatched: 1 });
      expect([gateway.lists(), gateway.polls()]).toEqual([2, 1]);
    },
  );
});
