// Deliveries from the simulator to a receiver mounted on every conformance target, with faults on
// the receiving side: handlers that fail or time out, a gateway that gives up on a slow answer,
// and a receiver that shuts down with deliveries in flight and comes back on the same port.
// Every job's event is handled exactly once; the simulator's counters equal what the receiver saw.
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createReceiver, type Receiver } from 'jobhook';
import { createClient, type GatewayClient } from 'jobhook/client';
import { startGateway, type Gateway, type GatewayOptions } from 'jobhook/testing';
import { afterEach, describe, expect, test } from 'vitest';
import type { Running } from '../adapters/http.js';
import { PATH, targets } from '../adapters/targets.js';
import { deferred, SECRET } from '../fixtures.js';
import { scaled, timeoutFor } from '../support/traffic.js';

const JOBS = scaled(12);

const cleanups: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function gatewayWith(
  deliveries: GatewayOptions['deliveries'],
  outcome?: NonNullable<GatewayOptions['jobs']>['outcome'],
): Promise<Gateway> {
  const gateway = await startGateway({
    rateLimit: false,
    credits: 1_000_000,
    maxConcurrentJobs: 10_000,
    jobs: { stepMs: 1, ...(outcome && { outcome }) },
    deliveries,
  });
  cleanups.push(() => gateway.close());
  return gateway;
}

/** What the receiving server answered, per attempt: status, delivery id, and whether it was sent. */
interface Seen {
  deliveryId: string;
  status: number;
  /** False when the connection was gone before the answer was written. */
  sent: boolean;
}

function watchAnswers(running: Running, seen: Seen[], onAnswer?: (answer: Seen) => void) {
  running.server.on('request', (req: IncomingMessage, res: ServerResponse) => {
    const deliveryId = String(req.headers['webhook-id']);
    let done = false;
    const record = (sent: boolean) => {
      if (done) return;
      done = true;
      const answer = { deliveryId, status: res.statusCode, sent };
      seen.push(answer);
      onAnswer?.(answer);
    };
    res.on('finish', () => record(true));
    res.on('close', () => record(res.writableFinished));
  });
}

async function start(target: (typeof targets)[number], receiver: Receiver, gateway: Gateway, port?: number) {
  const running = await target.start(receiver, port);
  // A test may already have stopped it, gracefully.
  cleanups.push(() => (running.server.listening ? running.close() : Promise.resolve()));
  const client = createClient({ apiKey: gateway.apiKey, baseUrl: gateway.baseUrl });
  return { running, client };
}

/** Waits for `condition`, looking every few milliseconds; bounded, so a hang becomes a failure. */
async function until(condition: () => boolean, what: string): Promise<void> {
  for (let i = 0; i < 4000; i++) {
    if (condition()) return;
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
  throw new Error(`Gave up waiting for ${what}.`);
}

async function submit(client: GatewayClient, count: number, from = 0): Promise<string[]> {
  const ids: string[] = [];
  for (let i = from; i < from + count; i++) {
    ids.push((await client.images.generate({ model: 'sim-1', prompt: `job ${i}` })).task_id);
  }
  return ids;
}

function expectCountersMatch(
  webhook: { total_sent?: number; total_failed?: number },
  gateway: Gateway,
  seen: Seen[],
) {
  const ok = seen.filter((a) => a.sent && a.status >= 200 && a.status < 300).length;
  // Attempts the simulator counts as failed: non-2xx answers, plus those that never got an answer
  // (refused connections, time-outs), which the receiver never saw or could not answer.
  const unanswered = gateway.deliveries.filter((d) => d.status === undefined).length;
  const failedAnswers = seen.filter((a) => a.sent && !(a.status >= 200 && a.status < 300)).length;
  expect(webhook.total_sent).toBe(ok);
  expect(webhook.total_failed).toBe(failedAnswers + unanswered);
  expect(gateway.deliveries).toHaveLength(ok + failedAnswers + unanswered);
}

describe.each(targets)('faults: $name', (target) => {
  test(
    `${JOBS} jobs whose handlers throw or time out on their first attempts: each handled exactly once`,
    async () => {
      // Each job's plan rides in its image_url: 0 succeeds at once, 1 throws twice, 2 times out,
      // then throws, then succeeds.
      const gateway = await gatewayWith({ retryDelaysMs: [5, 5, 5, 5, 5] }, ({ prompt }) => ({
        status: 'completed',
        image_url: `https://img.example/plan-${Number(prompt.split(' ')[1]) % 3}.png`,
      }));
      const receiver = createReceiver({
        secret: SECRET,
        handlerTimeoutMs: 100,
        logger: { error: () => undefined },
      });
      const attempts = new Map<string, number>();
      const handled = new Map<string, number>();
      const planOf = (imageUrl: string) => Number(/plan-(\d)/.exec(imageUrl)![1]);
      receiver.onJobCompleted(async (event, { signal }) => {
        const task = event.data.task_id;
        const attempt = (attempts.get(task) ?? 0) + 1;
        attempts.set(task, attempt);
        const plan = planOf(event.data.image_url);
        if (plan === 1 && attempt <= 2) throw new Error(`failure ${attempt}`);
        if (plan === 2 && attempt === 1) {
          await new Promise((resolve) => signal.addEventListener('abort', resolve));
          // Timed out (the delivery was already answered 500): stop by rejecting, which releases
          // the claim; returning normally would count as a late success.
          signal.throwIfAborted();
        }
        if (plan === 2 && attempt === 2) throw new Error('failure 2');
        handled.set(task, (handled.get(task) ?? 0) + 1);
      });
      const seen: Seen[] = [];
      const { running, client } = await start(target, receiver, gateway);
      watchAnswers(running, seen);
      await receiver.register({ client, url: `${running.origin}${PATH}` });

      const tasks = await submit(client, JOBS);
      await gateway.settled();

      expect(handled.size).toBe(JOBS);
      for (const task of tasks) expect(handled.get(task)).toBe(1);
      expect(tasks.map((task) => attempts.get(task))).toEqual(tasks.map((_, i) => [1, 3, 3][i % 3]));
      const [webhook] = await client.webhooks.list();
      expectCountersMatch(webhook!, gateway, seen);
      expect(webhook!.total_sent).toBe(JOBS);
      console.info(
        `[faults] ${target.name}: ${JOBS} jobs handled once each after ${seen.length} attempts; ` +
          `total_sent ${webhook!.total_sent}, total_failed ${webhook!.total_failed}`,
      );
    },
    timeoutFor(20_000),
  );

  test('a handler slower than the gateway time-out: the retry gets 409, the next 200 duplicate, handled once', async () => {
    const gateway = await gatewayWith({ retryDelaysMs: [5, 5, 5, 5], timeoutMs: 200 });
    const receiver = createReceiver({ secret: SECRET, logger: { error: () => undefined } });
    const conflicted = new Map<string, ReturnType<typeof deferred<void>>>();
    const gate = (id: string) => conflicted.get(id) ?? conflicted.set(id, deferred()).get(id)!;
    let runs = 0;
    // The first run waits until the gateway, having given up on it, retried and was told 409.
    receiver.onJobCompleted(async (_event, { deliveryId }) => {
      runs++;
      await gate(deliveryId!).promise;
    });
    const seen: Seen[] = [];
    const { running, client } = await start(target, receiver, gateway);
    watchAnswers(running, seen, (answer) => {
      if (answer.status === 409) gate(answer.deliveryId).resolve();
    });
    await receiver.register({ client, url: `${running.origin}${PATH}` });

    await submit(client, 1);
    await gateway.settled();

    expect(runs).toBe(1);
    const attempts = gateway.deliveries.map(({ attempt, ok, status, error }) => ({
      attempt,
      ok,
      status,
      error,
    }));
    expect(attempts).toEqual([
      { attempt: 1, ok: false, status: undefined, error: 'timed out after 200 ms' },
      { attempt: 2, ok: false, status: 409, error: 'HTTP 409' },
      { attempt: 3, ok: true, status: 200, error: undefined },
    ]);
    const [webhook] = await client.webhooks.list();
    expect(webhook).toMatchObject({ total_sent: 1, total_failed: 2 });
  });

  test.each([
    { stop: 'server.close()', abrupt: false },
    { stop: 'closeAllConnections() right after', abrupt: true },
  ])(
    'shutdown with deliveries in flight, then $stop: running handlers finish, new ones get 503, nothing is lost or run twice across a restart on the same port',
    async ({ abrupt }) => {
      // Long enough for the retries to outlast the restart, which takes milliseconds.
      const gateway = await gatewayWith({
        retryDelaysMs: [10, 20, 40, 80, 160, 320, 640, 1000, 2000, 4000, 8000],
      });
      const handledBy = new Map<string, string[]>();
      const inFlight = 3;
      const entered = deferred();
      const release = deferred();
      let running = 0;
      const makeReceiver = (name: string, block: boolean) => {
        const receiver = createReceiver({ secret: SECRET, logger: { error: () => undefined } });
        receiver.onJobCompleted(async (event) => {
          if (block) {
            if (++running === inFlight) entered.resolve();
            await release.promise;
          }
          const list = handledBy.get(event.data.task_id) ?? [];
          list.push(name);
          handledBy.set(event.data.task_id, list);
        });
        return receiver;
      };

      // First life: three deliveries arrive and block in their handlers.
      const first = makeReceiver('first', true);
      const seen: Seen[] = [];
      const enough503 = deferred();
      const { running: app, client } = await start(target, first, gateway);
      const { port } = app.server.address() as AddressInfo;
      watchAnswers(app, seen, () => {
        if (seen.filter((a) => a.status === 503).length >= inFlight) enough503.resolve();
      });
      await first.register({ client, url: `${app.origin}${PATH}` });
      const early = await submit(client, inFlight);
      await entered.promise;

      // Shut down: new deliveries get 503 while the running handlers are still going.
      const closing = first.close();
      const late = await submit(client, inFlight, inFlight);
      await enough503.promise;
      expect([...handledBy.keys()]).toEqual([]);
      release.resolve();
      await closing;
      expect(new Set(handledBy.keys())).toEqual(new Set(early));
      // Stop listening. Gracefully, answers being written are finished first; abruptly, every
      // connection is dropped at once, as an app that exits after close() does: the answers of
      // the handlers that just finished must already be out, or they would run again below.
      if (abrupt) await app.close();
      else await new Promise((resolve) => app.server.close(resolve));

      // Down: jobs finishing now find nothing listening, and the simulator keeps retrying them.
      const whileDown = await submit(client, inFlight, 2 * inFlight);
      await until(
        () =>
          whileDown.every((task) =>
            gateway.deliveries.some((d) => d.taskId === task && d.status === undefined),
          ),
        'a refused attempt for every job that finished while the receiver was down',
      );

      // Second life, same port: the simulator's retries of the 503s and refused attempts land here.
      const second = makeReceiver('second', false);
      const again = await target.start(second, port);
      cleanups.push(() => again.close());
      expect(again.origin).toBe(app.origin);
      watchAnswers(again, seen);
      await gateway.settled();

      for (const task of early) expect(handledBy.get(task)).toEqual(['first']);
      for (const task of [...late, ...whileDown]) expect(handledBy.get(task)).toEqual(['second']);
      const [webhook] = await client.webhooks.list();
      expectCountersMatch(webhook!, gateway, seen);
      expect(webhook!.total_sent).toBe(3 * inFlight);
      const refused = gateway.deliveries.filter((d) => d.status === undefined).length;
      console.info(
        `[faults] ${target.name} restart: ${3 * inFlight} jobs handled once each; ` +
          `${seen.filter((a) => a.status === 503).length} answers 503, ${refused} attempts refused while down; ` +
          `total_sent ${webhook!.total_sent}, total_failed ${webhook!.total_failed}`,
      );
    },
    timeoutFor(20_000),
  );
});
