// A BullMQ job whose worker died: BullMQ takes it up again once its lock has expired and its
// stalled-job check has run, so receiver.work() runs that check every 5 s beside BullMQ's 30 s
// locks, and docs/handoff.md states the bound that makes (lockDuration + 2 × stalledInterval,
// 40 s); BullMQ's own 30 s check made it up to 90 s. The run after the death is the job's next attempt
// (`context.attempt` from BullMQ's attemptsStarted, not attemptsMade, which counts failures only),
// and a failed event's attempts count it, so a retry by hand still runs as the next attempt.
import { readFile } from 'node:fs/promises';
import { Queue, Worker } from 'bullmq';
import { afterEach, describe, expect, it } from 'vitest';
import { createReceiver } from 'jobhook';
import { bullmqHandoff, type WorkerHandle } from 'jobhook/bullmq';
import type { HandoffJob } from 'jobhook/extend';
import { SECRET } from '../fixtures.js';
import { until } from './contract.js';
import { recordingReceiver } from './recording-receiver.js';
import { REDIS_URL, redisAvailable, redisForTest } from '../support/services.js';

const available = await redisAvailable();
const cleanups: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

const connection = { url: REDIS_URL };

/** A queue under a prefix of this test's own, and its hand-off (`attempts` tries, 10 ms apart). */
async function testQueue(attempts = 10) {
  const service = redisForTest();
  const prefix = service.prefix.slice(0, -1); // BullMQ adds the ':' itself
  const queue = new Queue<HandoffJob>('jobhook', { connection, prefix });
  cleanups.push(
    () => service.cleanup(),
    () => queue.close(),
  );
  await queue.waitUntilReady();
  const handoff = bullmqHandoff({ queue, jobOptions: { attempts, backoff: { type: 'fixed', delay: 10 } } });
  return { queue, prefix, handoff };
}

/** A started worker, closed after the test; `receiver.work()` types any engine's handle, this is BullMQ's. */
const running = async (worker: Promise<{ close(): Promise<void> }>) => {
  const handle = (await worker) as WorkerHandle;
  cleanups.push(() => handle.close());
  return handle;
};

describe.runIf(available)('a BullMQ job whose worker died', () => {
  it('receiver.work() checks for stalled jobs every 5 s beside 30 s locks: the bound docs/handoff.md states', async () => {
    const { handoff } = await testQueue();
    const receiver = createReceiver({ secret: SECRET, handoff });
    const { worker } = await running(receiver.work());
    expect(worker.opts).toMatchObject({ lockDuration: 30_000, stalledInterval: 5_000, maxStalledCount: 1 });
    // The lock is renewed every half of it while the process lives: a busy process keeps its jobs.
    expect(worker.opts.lockRenewTime).toBe(15_000);

    // A dead worker's lock lapses within lockDuration of its death; a check after that takes the
    // job up, and two checks can be up to twice stalledInterval apart (one that comes a moment
    // before the last one's marker expires does nothing): the bound the docs give, formula and
    // figure.
    const boundMs = worker.opts.lockDuration! + 2 * worker.opts.stalledInterval!;
    const docs = await readFile(new URL('../../docs/handoff.md', import.meta.url), 'utf8');
    expect(docs).toContain(`\`lockDuration + 2 × stalledInterval\` of the death`);
    expect(docs).toContain(`30 s + 2 × 5 s = ${boundMs / 1000} s`);
    expect(boundMs).toBe(40_000);
  });

  it('takes workerOptions over those defaults', async () => {
    const { handoff } = await testQueue();
    const receiver = createReceiver({ secret: SECRET, handoff });
    const { worker } = await running(receiver.work({ workerOptions: { stalledInterval: 1000 } }));
    expect(worker.opts).toMatchObject({ lockDuration: 30_000, stalledInterval: 1000 });
  });

  it('runs it again as its next attempt; a failed event counts that run, and a retry by hand counts on', async () => {
    const { queue, prefix, handoff } = await testQueue(2);
    const { deliver } = recordingReceiver(handoff);
    const id = await deliver();

    // A worker takes the job (its first attempt, a 200 ms lock) and dies: nothing renews its lock.
    const dead = new Worker<HandoffJob>('jobhook', null, { connection, prefix, lockDuration: 200 });
    cleanups.push(() => dead.close());
    const taken = await dead.getNextJob('dead-worker');
    expect(taken?.data.payload).toMatchObject({ id });
    expect(await queue.getJobCounts('active')).toEqual({ active: 1 });

    let broken = true;
    const attempts: (number | undefined)[] = [];
    const handled: string[] = [];
    const worker = createReceiver({ secret: SECRET })
      .onJobCompleted((event, context) => {
        attempts.push(context.attempt);
        if (broken) throw new Error('the database is down');
        handled.push(event.id);
      })
      .onError(() => undefined);
    // A lock long enough that a busy machine never makes this worker's own runs stall too.
    await running(handoff.work(worker, { workerOptions: { lockDuration: 10_000, stalledInterval: 200 } }));

    await until(async () => (await handoff.listFailed()).length === 1, 'the event to fail for good');
    // The dead worker's run was attempt 1; BullMQ's two failed runs came after it.
    expect(attempts).toEqual([2, 3]);
    const [failed] = await handoff.listFailed();
    expect(failed).toMatchObject({ key: id, attempts: 3 });

    broken = false;
    expect(await handoff.retryFailed(failed!.id)).toBe(true);
    await until(() => handled.length === 1, 'the retried event to run');
    expect(attempts).toEqual([2, 3, 4]);
  });
});
