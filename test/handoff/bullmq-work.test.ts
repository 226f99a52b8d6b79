// A BullMQ worker takes its queue from the hand-off: with a Queue of one's own name and prefix,
// `handoff.work(receiver)` runs what the receiver handed off. The deprecated runWorker, given
// neither that name nor the hand-off, used to listen on `bull:jobhook` and run nothing, silently:
// it now takes the receiver's own hand-off, refuses the default queue when the receiver has none
// and no Queue was ever made with it, and refuses a queue name or prefix that differs from the
// hand-off's, naming both.
import { Queue } from 'bullmq';
import { afterEach, describe, expect, it } from 'vitest';
import { createReceiver, type Receiver } from 'jobhook';
import { SECRET } from '../fixtures.js';
import { bullmqHandoff, runWorker, type WorkerHandle } from 'jobhook/bullmq';
import type { HandoffJob } from 'jobhook/extend';
import { until } from './contract.js';
import { invalidOptions, recordingReceiver } from './recording-receiver.js';
import { REDIS_URL, redisAvailable, redisForTest } from '../support/services.js';

const available = await redisAvailable();
const cleanups: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

const connection = { url: REDIS_URL };

/** The queue `images` under a prefix of this test's own, its hand-off, and a receiver that records runs. */
async function imagesQueue() {
  const service = redisForTest();
  const prefix = service.prefix.slice(0, -1); // BullMQ adds the ':' itself
  const queue = new Queue<HandoffJob>('images', { connection, prefix });
  cleanups.push(
    () => service.cleanup(),
    () => queue.close(),
  );
  await queue.waitUntilReady();
  const handoff = bullmqHandoff({ queue });
  const { receiver, ran, deliver } = recordingReceiver(handoff);
  return { queue, prefix, handoff, receiver, ran, deliver };
}

const running = async (worker: Promise<WorkerHandle>) => {
  const handle = await worker;
  cleanups.push(() => handle.close());
  return handle;
};

describe.runIf(available)('bullmqHandoff(...).work on a queue of its own', () => {
  it('runs the events the receiver handed off, on the queue’s name, connection and prefix', async () => {
    const { handoff, receiver, ran, deliver } = await imagesQueue();
    const id = await deliver();
    const handle = await running(handoff.work(receiver, { concurrency: 2 }));
    expect(handle.worker.name).toBe('images');
    await until(() => ran.length === 1, 'the worker to run the event', 10_000);
    expect(ran).toEqual([id]);
  });

  it('receiver.work() starts that worker: the one way, on the receiver’s own hand-off', async () => {
    const { receiver, ran, deliver } = await imagesQueue();
    const id = await deliver();
    const handle = await receiver.work({ concurrency: 2 });
    cleanups.push(() => handle.close());
    await until(() => ran.length === 1, 'the worker to run the event', 10_000);
    expect(ran).toEqual([id]);
  });

  it('refuses a prefix in workerOptions that is not the queue’s', async () => {
    const { handoff, receiver, prefix } = await imagesQueue();
    const workerOptions = { prefix: 'bull' } as never;
    await expect(handoff.work(receiver as Receiver, { workerOptions })).rejects.toThrow(
      invalidOptions(new RegExp(`bullmqHandoff.work: .workerOptions.prefix. is "bull", but .*"${prefix}"`)),
    );
  });
});

describe.runIf(available)('runWorker (deprecated) beside a queue of its own', () => {
  it("without the queue name or the hand-off, runs on the receiver's own hand-off", async () => {
    const { receiver, ran, deliver } = await imagesQueue();
    const id = await deliver();
    const handle = await running(runWorker(receiver, { connection, onWorkerError: () => undefined }));
    expect(handle.worker.name).toBe('images');
    await until(() => ran.length === 1, 'the worker to run the event', 10_000);
    expect(ran).toEqual([id]);
  });

  it("refuses a queue name that is not the receiver's own hand-off's", async () => {
    const { receiver } = await imagesQueue();
    await expect(running(runWorker(receiver, { connection, queueName: 'jobhook' }))).rejects.toThrow(
      invalidOptions(/runWorker: `queueName` is "jobhook", but the hand-off's queue is "images"/),
    );
  });

  it('a receiver without a hand-off: refuses the default queue no Queue was made with', async () => {
    const { prefix } = await imagesQueue();
    const receiver = createReceiver({ secret: SECRET });
    await expect(
      running(runWorker(receiver, { connection, workerOptions: { prefix }, onWorkerError: () => undefined })),
    ).rejects.toThrow(
      invalidOptions(
        new RegExp(`runWorker: there is no BullMQ queue "jobhook" under the prefix "${prefix}"`),
      ),
    );
  });

  it('given the hand-off, refuses another queue name, naming both, and otherwise runs on its queue', async () => {
    const { handoff, receiver, ran, deliver } = await imagesQueue();
    await expect(running(runWorker(receiver, { connection, queueName: 'jobhook', handoff }))).rejects.toThrow(
      invalidOptions(/runWorker: `queueName` is "jobhook", but the hand-off's queue is "images"/),
    );
    const id = await deliver();
    await running(runWorker(receiver, { handoff }));
    await until(() => ran.length === 1, 'the worker to run the event', 10_000);
    expect(ran).toEqual([id]);
  });
});
