// createReceiver({ confirm }) against the gateway simulator: each delivery is a hint, the task is
// asked for with GET /api/v1/images/{task_id}, and the handlers run with the gateway's answer.
import { createHmac, randomUUID } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createReceiver, memoryJobTracker, type JobhookError } from 'jobhook';
import { createClient, type GatewayClient } from 'jobhook/client';
import type { JobTracker, Verifier } from 'jobhook/extend';
import { nodeHandler } from 'jobhook/node';
import { signDelivery, startGateway, type Gateway, type GatewayOptions } from 'jobhook/testing';
import { afterEach, describe, expect, it } from 'vitest';
import { deferred } from '../fixtures.js';
import { SECRET } from '../support/deliveries.js';

let gateway: Gateway;
const closers: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const close of closers.splice(0).reverse()) await close();
  await gateway?.close();
  gateway = undefined as never;
});

interface Run {
  taskId: string;
  type: string;
  imageUrl: unknown;
  confirmed: boolean;
  source: string;
}

type ReceiverOptions = Parameters<typeof createReceiver>[0];

/** The GETs of task records the gateway answered (a poll, a wait or a confirmation). */
const taskGets = () =>
  gateway.requests.filter((request) => request.method === 'GET' && request.path.startsWith('/api/v1/images/'))
    .length;

async function setUp(
  options: {
    gateway?: GatewayOptions;
    receiver?: (client: GatewayClient, jobs: ReturnType<typeof memoryJobTracker>) => ReceiverOptions;
    tracked?: boolean;
  } = {},
) {
  gateway = await startGateway({ maxConcurrentJobs: 2000, credits: 1_000_000, ...options.gateway });
  const jobs = memoryJobTracker();
  const client = createClient({
    baseUrl: gateway.baseUrl,
    apiKey: gateway.apiKey,
    retries: 0,
    ...(options.tracked === false ? {} : { jobs }),
  });
  const runs: Run[] = [];
  const errors: JobhookError[] = [];
  const receiver = createReceiver(options.receiver?.(client, jobs) ?? { confirm: { client, jobs } });
  const handle = (given: unknown, context: { confirmed: boolean; source: string }) => {
    const event = given as { type: string; data: { task_id: string; image_url?: unknown } };
    runs.push({
      taskId: event.data.task_id,
      type: event.type,
      imageUrl: event.data.image_url,
      confirmed: context.confirmed,
      source: context.source,
    });
  };
  receiver.onJobCompleted(handle).onJobFailed(handle);
  receiver.onError((error) => void errors.push(error));
  const server: Server = createServer(nodeHandler(receiver, { path: '/webhooks' }));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/webhooks`;
  closers.push(
    () => receiver.close(),
    () => new Promise((resolve) => server.close(resolve)),
  );
  return { client, jobs, runs, errors, receiver, url };
}

/** A hint as anyone could post it: unsigned, in the default payload shape. */
function hint(taskId: string, fields: { type?: string; image_url?: string } = {}) {
  const type = fields.type ?? 'job.completed';
  const data: Record<string, unknown> = {
    task_id: taskId,
    status: type === 'job.completed' ? 'completed' : 'failed',
  };
  if (type === 'job.completed') data.image_url = fields.image_url ?? 'https://images.example/forged.png';
  else data.error = { code: 'x', message: 'x' };
  return {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ id: `evt_${randomUUID()}`, type, created_at: new Date().toISOString(), data }),
  };
}

async function post(url: string, taskId: string, fields?: { type?: string; image_url?: string }) {
  const answer = await fetch(url, hint(taskId, fields));
  return { status: answer.status, retryAfter: answer.headers.get('retry-after'), body: await answer.text() };
}

/** Submits a job and waits for its end by the API alone (no webhook): the gateway's record of it. */
async function finishedTask(client: GatewayClient, prompt = 'a cat') {
  const { task_id } = await client.images.generate({ model: 'm', prompt });
  for (;;) {
    const task = await client.images.get(task_id);
    if (task.status === 'completed' || task.status === 'failed') return task;
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

async function subscribe(client: GatewayClient, url: string) {
  await client.webhooks.create({ url, events: ['job.completed', 'job.failed'], secret_key: SECRET });
}

/** HMAC-SHA512 over the body in `x-signature-512`: a family jobhook has no verifier for. */
const hmacSha512: Verifier = {
  name: 'hmac-sha512',
  prepare: () => () => ({ ok: false, code: 'no_match' }),
  sign: ({ secret, body }) => ({
    'x-signature-512': createHmac('sha512', secret).update(body).digest('hex'),
  }),
};

describe('confirm mode', () => {
  for (const [name, signing] of [
    ['unsigned deliveries', 'unsigned'],
    ['deliveries signed in a family jobhook cannot verify (HMAC-SHA512)', hmacSha512],
  ] as const) {
    it(`handles ${name} once each, with the API's values`, async () => {
      const { client, runs, url } = await setUp({ gateway: { signing } });
      await subscribe(client, url);
      const submitted = await Promise.all(
        Array.from({ length: 10 }, (_, i) =>
          client.images.generate({ model: 'm', prompt: `cat ${i}${i % 3 ? '' : ' fail'}` }),
        ),
      );
      await gateway.settled();
      expect(gateway.deliveries.every((attempt) => attempt.status === 200)).toBe(true);
      expect(runs.map((run) => run.taskId).sort()).toEqual(submitted.map((s) => s.task_id).sort());
      for (const run of runs) {
        const task = await client.images.get(run.taskId);
        expect(run.type).toBe(task.status === 'completed' ? 'job.completed' : 'job.failed');
        expect(run.imageUrl).toBe(task.image_url);
        expect(run.confirmed).toBe(true);
      }
    });
  }

  it('refuses 1,000 forged hints for random task ids without a GET when a tracker is given', async () => {
    const { receiver, runs } = await setUp();
    const before = taskGets();
    const answers = await Promise.all(
      Array.from({ length: 1000 }, () => receiver.receive(hint(`task_${randomUUID()}`))),
    );
    expect(new Set(answers.map((answer) => answer.status))).toEqual(new Set([401]));
    expect(taskGets() - before).toBe(0);
    expect(runs).toEqual([]);
  });

  it("gives the handler the API's image_url for a forged hint of a real task, and reports the mismatch once", async () => {
    const { client, runs, errors, url } = await setUp();
    const task = await finishedTask(client);
    const first = await post(url, task.task_id, { image_url: 'https://evil.example/made-up.png' });
    const again = await post(url, task.task_id, { image_url: 'https://evil.example/made-up.png' });
    expect([first.status, again.status]).toEqual([200, 200]);
    expect(runs).toEqual([
      {
        taskId: task.task_id,
        type: 'job.completed',
        imageUrl: task.image_url,
        confirmed: true,
        source: 'webhook',
      },
    ]);
    expect(errors.map((error) => error.code)).toEqual(['confirm_mismatch']);
  });

  it('runs the failure the gateway reports for a hint that says the task completed', async () => {
    const { client, runs, errors, url } = await setUp();
    const task = await finishedTask(client, 'this will fail');
    expect(task.status).toBe('failed');
    expect((await post(url, task.task_id)).status).toBe(200);
    expect(runs).toEqual([
      { taskId: task.task_id, type: 'job.failed', imageUrl: undefined, confirmed: true, source: 'webhook' },
    ]);
    expect(errors.map((error) => error.code)).toEqual(['confirm_mismatch']);
  });

  it('makes one GET for 100 concurrent hints of one task, and none for a hint after it was handled', async () => {
    const { client, receiver, runs } = await setUp();
    const task = await finishedTask(client);
    const before = taskGets();
    const answers = await Promise.all(
      Array.from({ length: 100 }, () => receiver.receive(hint(task.task_id))),
    );
    expect(taskGets() - before).toBe(1);
    expect(answers.every((answer) => answer.status === 200)).toBe(true);
    expect(runs).toHaveLength(1);
    expect((await receiver.receive(hint(task.task_id))).status).toBe(200);
    expect(taskGets() - before).toBe(1);
  });

  it('shares the GET with a wait on the task', async () => {
    const { client, receiver } = await setUp();
    const task = await finishedTask(client);
    const before = taskGets();
    const answering = receiver.receive(hint(task.task_id));
    const waited = client.images.waitFor(task.task_id, { receiver });
    expect((await answering).status).toBe(200);
    expect((await waited).image_url).toBe(task.image_url);
    expect(taskGets() - before).toBe(1);
  });

  for (const first of ['hint', 'poll'] as const) {
    it(`makes one GET between a hint and the reconciler's poll of one task in flight together (the ${first} first)`, async () => {
      // The receiver's GETs of task records wait at a gate, so that both are in flight at once.
      const gate = deferred();
      const entered = deferred();
      const claimed = deferred();
      let gets = 0;
      const gated: typeof fetch = async (input, init) => {
        const path = new URL(input instanceof Request ? input.url : String(input)).pathname;
        if (path.startsWith('/api/v1/images/')) {
          gets++;
          entered.resolve();
          await gate.promise;
        }
        return fetch(input, init);
      };
      const { client, receiver, runs } = await setUp({
        receiver: (_client, jobs) => {
          const gatedClient = createClient({
            baseUrl: gateway.baseUrl,
            apiKey: gateway.apiKey,
            retries: 0,
            fetch: gated,
          });
          const reconcileJobs: JobTracker = {
            ...jobs,
            claimDue: (request) => {
              const due = jobs.claimDue(request);
              claimed.resolve();
              return due;
            },
          };
          return {
            confirm: { client: gatedClient },
            reconcile: { client: gatedClient, jobs: reconcileJobs, afterMs: 0, intervalMs: 0 },
          };
        },
      });
      const task = await finishedTask(client);
      const before = taskGets();
      const settled = new Set<string>();
      let answering: Promise<{ status: number }> | undefined;
      let reconciling: Promise<{ polled: number }> | undefined;
      const startHint = () => {
        answering = receiver.receive(hint(task.task_id)).finally(() => settled.add('hint'));
      };
      const startPoll = () => {
        reconciling = receiver.reconcileOnce().finally(() => settled.add('poll'));
      };
      if (first === 'hint') {
        startHint();
        await entered.promise;
        startPoll();
        await claimed.promise;
      } else {
        startPoll();
        await entered.promise;
        startHint();
      }
      // From its claim (a poll) or its arrival (a hint) to the GET, nothing is awaited but promises.
      await new Promise((resolve) => setImmediate(resolve));
      // Both are waiting for the GET at the gate.
      expect(settled).toEqual(new Set());
      gate.resolve();
      expect((await answering!).status).toBe(200);
      // The poll was made (not skipped as handled), through the one GET.
      expect((await reconciling!).polled).toBe(1);
      expect(gets).toBe(1);
      expect(taskGets() - before).toBe(1);
      expect(runs).toHaveLength(1);
    });
  }

  for (const status of [429, 500]) {
    it(`answers 503 with Retry-After when the GET is answered ${status}, and handles the retry`, async () => {
      const { client, runs, url } = await setUp();
      const task = await finishedTask(client);
      gateway.failNext({
        status,
        method: 'GET',
        path: `/api/v1/images/${task.task_id}`,
        retryAfterSeconds: 7,
      });
      const refused = await post(url, task.task_id);
      expect(refused.status).toBe(503);
      expect(refused.retryAfter).toBe('7');
      expect(JSON.parse(refused.body).error.code).toBe('unconfirmed');
      expect(runs).toEqual([]);
      expect((await post(url, task.task_id)).status).toBe(200);
      expect(runs).toHaveLength(1);
    });
  }

  it('answers a hint of a task still running 2xx, and the reconciler later handles the task once', async () => {
    const { client, runs, url, receiver } = await setUp({
      gateway: { jobs: { auto: false } },
      receiver: (client, jobs) => ({
        confirm: { client },
        reconcile: { client, jobs, afterMs: 0, intervalMs: 0 },
      }),
    });
    const { task_id } = await client.images.generate({ model: 'm', prompt: 'a cat' });
    expect((await post(url, task_id)).status).toBe(200);
    expect(runs).toEqual([]);
    gateway.advanceJob(task_id);
    gateway.advanceJob(task_id);
    await receiver.reconcileOnce();
    expect(runs).toMatchObject([{ taskId: task_id, confirmed: true, source: 'poll' }]);
    const before = taskGets();
    expect((await post(url, task_id)).status).toBe(200);
    await receiver.reconcileOnce();
    expect(runs).toHaveLength(1);
    expect(taskGets()).toBe(before);
  });

  it('tracks a running task for the reconciler when its hint comes, though nothing else tracked it', async () => {
    const tracker = memoryJobTracker();
    // A tracker of one's own without has(): confirm mode has no tracker to vouch for a hinted task
    // (the GET is made within lookupsPerMinute), and the submitting client tracks nothing.
    const reconcileJobs: JobTracker = { ...tracker };
    delete reconcileJobs.has;
    const { client, runs, url, receiver } = await setUp({
      gateway: { jobs: { auto: false } },
      tracked: false,
      receiver: (client) => ({
        confirm: { client },
        reconcile: { client, jobs: reconcileJobs, afterMs: 0, intervalMs: 0 },
      }),
    });
    const { task_id } = await client.images.generate({ model: 'm', prompt: 'a cat' });
    expect(tracker.pending()).toEqual([]);
    expect((await post(url, task_id)).status).toBe(200);
    expect(tracker.pending().map((job) => job.taskId)).toEqual([task_id]);
    expect(runs).toEqual([]);
    gateway.advanceJob(task_id);
    gateway.advanceJob(task_id);
    await receiver.reconcileOnce();
    expect(runs).toMatchObject([{ taskId: task_id, confirmed: true, source: 'poll' }]);
    await receiver.reconcileOnce();
    expect(runs).toHaveLength(1);
    expect(tracker.pending()).toEqual([]);
  });

  it('refuses a hint whose task the gateway does not know (404) as a wrong signature is', async () => {
    const { url, runs } = await setUp({ tracked: false, receiver: (client) => ({ confirm: { client } }) });
    const refused = await post(url, `task_${randomUUID()}`);
    expect(refused.status).toBe(401);
    expect(taskGets()).toBe(1);
    // The answer to a bad signature, from a receiver that checks one.
    const checking = createReceiver({ secret: SECRET });
    const bad = await checking.receive({
      headers: {
        'webhook-id': 'a',
        'webhook-timestamp': `${Math.floor(Date.now() / 1000)}`,
        'webhook-signature': `v1,${Buffer.alloc(32).toString('base64')}`,
      },
      body: hint('x').body,
    });
    expect(refused.body).toBe(bad.body);
    expect(runs).toEqual([]);
  });

  it('limits the GETs for tasks no tracker vouches for', async () => {
    const { url } = await setUp({
      tracked: false,
      receiver: (client) => ({ confirm: { client, lookupsPerMinute: 2 } }),
    });
    const statuses = [];
    for (let i = 0; i < 4; i++) statuses.push((await post(url, `task_${randomUUID()}`)).status);
    expect(statuses).toEqual([401, 401, 503, 503]);
    expect(taskGets()).toBe(2);
  });

  it('with a secret, a delivery must verify before it is confirmed', async () => {
    const { url, runs, client } = await setUp({
      receiver: (client, jobs) => ({ secret: SECRET, confirm: { client, jobs } }),
    });
    const task = await finishedTask(client);
    const before = taskGets();
    expect((await post(url, task.task_id)).status).toBe(401);
    expect(taskGets()).toBe(before);
    expect(runs).toEqual([]);
  });

  it("with a secret, a correctly signed delivery is still confirmed: one GET, and the handler gets the API's image_url", async () => {
    const { client, runs, errors, url } = await setUp({
      receiver: (client, jobs) => ({ secret: SECRET, confirm: { client, jobs } }),
    });
    const task = await finishedTask(client);
    // Signed with the receiver's own secret: it verifies, but its image_url is made up.
    const signed = signDelivery({
      secret: SECRET,
      payload: JSON.parse(hint(task.task_id, { image_url: 'https://evil.example/made-up.png' }).body),
    });
    const before = taskGets();
    const answer = await fetch(url, {
      method: 'POST',
      headers: signed.headers,
      body: signed.body as BodyInit,
    });
    expect(answer.status).toBe(200);
    expect(taskGets() - before).toBe(1);
    expect(runs).toEqual([
      {
        taskId: task.task_id,
        type: 'job.completed',
        imageUrl: task.image_url,
        confirmed: true,
        source: 'webhook',
      },
    ]);
    expect(errors.map((error) => error.code)).toEqual(['confirm_mismatch']);
  });

  it("reads the task id through a contract's paths, with a scheme jobhook cannot check", async () => {
    const { client, receiver, runs } = await setUp({
      receiver: (client, jobs) => ({
        confirm: { client, jobs },
        contract: {
          signature: { scheme: 'unknown' },
          payload: {
            typePath: 'event',
            typeValues: { completed: 'done', failed: 'error' },
            taskIdPath: 'job.id',
            imageUrlPath: 'job.url',
          },
        },
      }),
    });
    const task = await finishedTask(client);
    const answer = await receiver.receive({
      headers: { 'x-slack-signature': 'v0=00' },
      body: JSON.stringify({ event: 'done', job: { id: task.task_id, url: 'https://evil.example/x.png' } }),
    });
    expect(answer.status).toBe(200);
    expect(runs).toMatchObject([{ taskId: task.task_id, imageUrl: task.image_url, confirmed: true }]);
  });
});
