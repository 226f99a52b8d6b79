// A BullMQ job whose worker died: the run after the death is the job's next attempt
// (`context.attempt` from BullMQ's attemptsStarted, not attemptsMade, which counts failures only),
// and a failed event's attempts count it, so a retry by hand still runs as the next attempt.
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
