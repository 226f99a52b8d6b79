// jobhook/bullmq against a real Redis: the receiver answers 2xx only once the event is a job in
// the queue, one job per event (copies, retries, a rotation's second delivery id, also after the
// job was removed), workers run the receiver's handlers with BullMQ's retries, a job that keeps
// failing waits in the failed set with its event and can be retried from there, and nothing from
// the network reaches the handlers without a valid signature.
import { once } from 'node:events';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { Queue, type Job } from 'bullmq';
import { afterEach, describe, expect, it } from 'vitest';
import { createReceiver, JobhookError, type Receiver } from 'jobhook';
import { bullmqHandoff, jobIdOf, runWorker, type WorkerHandle } from 'jobhook/bullmq';
import type { HandoffJob } from 'jobhook/extend';
import { nodeHandler } from 'jobhook/node';
import { signDelivery } from 'jobhook/testing';
import { completed, SECRET } from '../adapters/fixtures.js';
import { freePort, REDIS_URL, redisAvailable, redisForTest } from '../support/services.js';

const available = await redisAvailable();
const cleanups: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

const connection = { url: REDIS_URL };

/** A queue of this test's own (its keys under the run's prefix, removed afterwards). */
function testQueue() {
  const service = redisForTest();
  const prefix = service.prefix.slice(0, -1); // BullMQ adds the ':' itself
  const queue = new Queue<HandoffJob>('jobhook', { connection, prefix });
  cleanups.push(
    () => service.cleanup(),
    () => queue.close(),
  );
  return { queue, prefix };
}

async function startWorker(receiver: Receiver, queue: Queue<HandoffJob>): Promise<WorkerHandle> {
  const handle = await bullmqHandoff({ queue }).work(receiver);
  cleanups.push(() => handle.close());
  return handle;
}

const deliver = (receiver: Receiver, payload: object, id?: string) => {
  const delivery = signDelivery({ secret: SECRET, payload, ...(id !== undefined && { id }) });
  return receiver.receive({ headers: delivery.headers, body: delivery.body });
};

/** Waits until `check` holds, polling (a bound against a hang, not a speed check). */
async function until(check: () => Promise<boolean> | boolean, what: string, ms = 15_000) {
  const deadline = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(20);
  }
}

describe.runIf(available)('bullmqHandoff', () => {
  it('answers 200 once the event is a job in the queue; the receiver runs no handler itself', async () => {
    const { queue } = testQueue();
    const ran: string[] = [];
    const receiver = createReceiver({ secret: SECRET, handoff: bullmqHandoff({ queue }) }).onJobCompleted(
      (event) => void ran.push(event.id),
    );
    const payload = completed();
    const answer = await deliver(receiver, payload, 'msg_first');
    expect(answer.status).toBe(200);
    const job = await queue.getJob(jobIdOf(payload.id));
    expect(job?.name).toBe('job.completed');
    expect(job?.data).toMatchObject({
      key: payload.id,
      type: 'job.completed',
      deliveryId: 'msg_first',
      payload,
    });
    expect(await job?.getState()).toBe('waiting');
    expect(job?.opts.attempts).toBe(10);
    expect(ran).toEqual([]);
  });

  it('queues one job per event: copies, a rotation’s second delivery id, and after the job was removed', async () => {
    const { queue } = testQueue();
    const receiver = createReceiver({
      secret: SECRET,
      handoff: bullmqHandoff({ queue, jobOptions: { removeOnComplete: true } }),
    });
    const payload = completed();
    const answers = await Promise.all([
      deliver(receiver, payload, 'msg_a'),
      deliver(receiver, payload, 'msg_a'),
      deliver(receiver, payload, 'msg_b'), // the same event through the second webhook
    ]);
    expect(answers.map((a) => a.status)).toEqual([200, 200, 200]);
    expect(await queue.count()).toBe(1);

    // The job runs and is removed (removeOnComplete): the key stays deduplicated.
    let runs = 0;
    const worker = createReceiver({ secret: SECRET }).onJobCompleted(() => void runs++);
    await startWorker(worker, queue);
    await until(async () => (await queue.getJob(jobIdOf(payload.id))) === undefined, 'the job to go');
    expect((await deliver(receiver, payload, 'msg_c')).status).toBe(200);
    await sleep(200);
    expect(await queue.getJob(jobIdOf(payload.id))).toBeUndefined();
    expect(runs).toBe(1);
  });

  it('answers 503 within its time-out when Redis does not answer; the gateway retries', async () => {
    const port = await freePort(); // nobody listens: the queue's client keeps reconnecting
    const queue = new Queue('jobhook', { connection: { port, host: '127.0.0.1' } });
    queue.on('error', () => undefined);
    cleanups.push(() => queue.close().catch(() => undefined));
    const errors: string[] = [];
    const receiver = createReceiver({
      secret: SECRET,
      handoff: bullmqHandoff({ queue, timeoutMs: 200 }),
      logger: { error: (line) => errors.push(line), warn: () => undefined },
    });
    const answer = await deliver(receiver, completed());
    expect(answer.status).toBe(503);
    expect(JSON.parse(answer.body)).toMatchObject({ ok: false, error: { code: 'handoff_failed' } });
    expect(answer.headers['retry-after']).toBeDefined();
    expect(errors.join('\n')).toMatch(/could not be queued/);
  });

  it('refuses a request that is shaped like a job but unsigned: the network never reaches handleQueued', async () => {
    const { queue } = testQueue();
    let runs = 0;
    const receiver = createReceiver({ secret: SECRET, handoff: bullmqHandoff({ queue }) }).onJobCompleted(
      () => void runs++,
    );
    const server = createServer(nodeHandler(receiver, { path: '/webhooks' }));
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    cleanups.push(() => new Promise((resolve) => server.close(resolve)));
    const job: HandoffJob = {
      key: 'evt_forged',
      type: 'job.completed',
      deliveryId: 'msg_forged',
      payload: completed({ id: 'evt_forged' }),
      receivedAt: Date.now(),
    };
    const response = await fetch(`http://127.0.0.1:${(server.address() as AddressInfo).port}/webhooks`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(job),
    });
    expect(response.status).toBe(401);
    expect(await queue.count()).toBe(0);
    expect(runs).toBe(0);
  });

  it('refuses a receiver with both a hand-off and a dedupe store: the queue dedupes', () => {
    const queue = { name: 'q', add: () => Promise.resolve() };
    expect(() =>
      createReceiver({ secret: SECRET, handoff: bullmqHandoff({ queue }), dedupe: { leaseMs: 1 } as never }),
    ).toThrow(JobhookError);
    expect(() => bullmqHandoff({ queue: undefined as never })).toThrow(/bullmqHandoff: `queue` must be/);
  });
});

describe.runIf(available)('the worker (handoff.work)', () => {
  it('runs the receiver’s handlers for queued events, retrying a failing one with BullMQ’s backoff', async () => {
    const { queue } = testQueue();
    const receiver = createReceiver({
      secret: SECRET,
      handoff: bullmqHandoff({ queue, jobOptions: { backoff: { type: 'fixed', delay: 10 } } }),
    });
    let calls = 0;
    const seen: { id: string; deliveryId: string | undefined }[] = [];
    const reported: string[] = [];
    const worker = createReceiver({ secret: SECRET })
      .onJobCompleted((event, context) => {
        if (++calls <= 2) throw new Error(`attempt ${calls} fails`);
        seen.push({ id: event.id, deliveryId: context.deliveryId });
      })
      .onError((error) => void reported.push(`${error.code}: ${error.message}`));
    const handle = await startWorker(worker, queue);
    const completedJobs: Job[] = [];
    handle.worker.on('completed', (job) => void completedJobs.push(job));

    const payload = completed();
    expect((await deliver(receiver, payload, 'msg_w')).status).toBe(200);
    await until(() => completedJobs.length === 1, 'the job to complete');
    expect(seen).toEqual([{ id: payload.id, deliveryId: 'msg_w' }]);
    expect(completedJobs[0]!.attemptsMade).toBe(3);
    expect(reported).toEqual([
      'handler_failed: A job.completed handler failed: attempt 1 fails',
      'handler_failed: A job.completed handler failed: attempt 2 fails',
    ]);
  });

  it('tells the receiver’s observer how long a job waited between hand-off and first start, once', async () => {
    const { queue } = testQueue();
    const receiver = createReceiver({
      secret: SECRET,
      handoff: bullmqHandoff({ queue, jobOptions: { backoff: { type: 'fixed', delay: 10 } } }),
    });
    const seen: { deliveryId: string | undefined; type: string; latencyMs: number }[] = [];
    let calls = 0;
    const worker = createReceiver({
      secret: SECRET,
      observer: { start: () => undefined, end: () => undefined, handoff: (h) => void seen.push(h) },
    })
      .onJobCompleted(() => {
        if (++calls === 1) throw new Error('once');
      })
      .onError(() => undefined);
    const handle = await startWorker(worker, queue);
    const done: Job[] = [];
    handle.worker.on('completed', (job) => void done.push(job));
    await deliver(receiver, completed(), 'msg_latency');
    await until(() => done.length === 1, 'the job to complete');
    expect(calls).toBe(2);
    expect(seen).toEqual([
      { deliveryId: 'msg_latency', type: 'job.completed', latencyMs: expect.any(Number) },
    ]);
    expect(seen[0]!.latencyMs).toBeGreaterThanOrEqual(0);
  });

  it('applies the handler time-out: a handler past it fails the attempt', async () => {
    const { queue } = testQueue();
    const receiver = createReceiver({
      secret: SECRET,
      handoff: bullmqHandoff({ queue, jobOptions: { attempts: 1 } }),
    });
    const worker = createReceiver({ secret: SECRET, handlerTimeoutMs: 50 })
      .onJobCompleted(() => sleep(2000))
      .onError(() => undefined);
    const handle = await startWorker(worker, queue);
    const failed: string[] = [];
    handle.worker.on('failed', (_job, error) => void failed.push(error.message));
    await deliver(receiver, completed());
    await until(() => failed.length === 1, 'the job to fail');
    expect(failed[0]).toMatch(/did not finish within 50 ms/);
  });

  it('keeps a job that keeps failing in the failed set with its event; job.retry() runs it again', async () => {
    const { queue } = testQueue();
    const receiver = createReceiver({
      secret: SECRET,
      handoff: bullmqHandoff({
        queue,
        jobOptions: { attempts: 2, backoff: { type: 'fixed', delay: 10 } },
      }),
    });
    let broken = true;
    const handled: string[] = [];
    const worker = createReceiver({ secret: SECRET })
      .onJobCompleted((event) => {
        if (broken) throw new Error('the database is down');
        handled.push(event.id);
      })
      .onError(() => undefined);
    await startWorker(worker, queue);

    const payload = completed();
    await deliver(receiver, payload);
    await until(async () => (await queue.getJobCounts('failed')).failed === 1, 'the job to fail for good');
    const [job] = await queue.getFailed();
    expect(job!.id).toBe(jobIdOf(payload.id));
    expect(job!.data.payload).toEqual(payload);
    expect(job!.attemptsMade).toBe(2);
    expect(job!.failedReason).toMatch(/the database is down/);
    // A later delivery of the event (the gateway retried) finds the failed job: no second job.
    expect((await deliver(receiver, payload)).status).toBe(200);
    expect(await queue.getJobCounts('failed', 'waiting')).toEqual({ failed: 1, waiting: 0 });

    broken = false;
    await job!.retry();
    await until(() => handled.length === 1, 'the retried job to run');
    expect(handled).toEqual([payload.id]);
    await until(async () => (await queue.getJobCounts('completed')).completed === 1, 'completion');
  });

  it('fails a job whose payload no longer matches the schema at once, without retries', async () => {
    const { queue } = testQueue();
    const worker = createReceiver({ secret: SECRET }).onJobCompleted(() => undefined);
    const handle = await startWorker(worker, queue);
    const failed: Job[] = [];
    handle.worker.on('failed', (job) => void (job && failed.push(job)));
    const payload = { ...completed(), data: { status: 'completed' } }; // no task_id, no image_url
    await queue.add(
      'job.completed',
      { key: payload.id, type: 'job.completed', deliveryId: 'msg_x', payload, receivedAt: Date.now() },
      { attempts: 5 },
    );
    await until(() => failed.length === 1, 'the job to fail');
    expect(failed[0]!.attemptsMade).toBe(1);
    expect(failed[0]!.failedReason).toMatch(/does not match its schema/);
  });

  it('needs a receiver and a connection', async () => {
    await expect(runWorker(undefined as never, { connection })).rejects.toThrow(JobhookError);
    await expect(runWorker(createReceiver({ secret: SECRET }), undefined as never)).rejects.toThrow(
      /runWorker: `connection` must be/,
    );
  });
});
