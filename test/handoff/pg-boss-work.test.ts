// A pg-boss worker takes its queue and schema from the hand-off: with a queue of one's own in a
// schema of one's own, `handoff.work(receiver)` runs what the receiver handed off. The deprecated
// runPgBossWorker, given neither the queue nor the hand-off, used to create the queue `jobhook`
// and poll it, running nothing, silently: it now takes the receiver's own hand-off, refuses (for a
// receiver without one) when that queue is missing and others exist, naming them, and refuses
// another queue or schema than the hand-off's, naming both.
import { afterEach, describe, expect, it } from 'vitest';
import { pgBossHandoff, runPgBossWorker, type WorkerHandle } from 'jobhook/pg-boss';
import { createReceiver } from 'jobhook';
import { SECRET } from '../fixtures.js';
import { until } from './contract.js';
import { invalidOptions, recordingReceiver } from './recording-receiver.js';
import { postgresAvailable } from '../support/services.js';
import { bossOnOwnSchema } from './pg-boss-own-schema.js';

const available = await postgresAvailable();
const cleanups: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/** The queue `images` in a schema of this test's own, its hand-off, and a receiver that records runs. */
async function imagesQueue() {
  const { boss, schema } = await bossOnOwnSchema(cleanups);
  const handoff = pgBossHandoff({ boss, queue: 'images' });
  const { receiver, ran, deliver } = recordingReceiver(handoff);
  return { boss, schema, handoff, receiver, ran, deliver };
}

const running = async (worker: Promise<WorkerHandle>) => {
  const handle = await worker;
  cleanups.push(() => handle.close());
  return handle;
};

describe.runIf(available)('pgBossHandoff(...).work on a queue and schema of its own', () => {
  it('runs the events the receiver handed off', async () => {
    const { receiver, ran, deliver } = await imagesQueue();
    const id = await deliver();
    // receiver.work(): the one way to start a worker, on the receiver's own hand-off.
    await running(receiver.work({ pollingIntervalSeconds: 0.5 }));
    await until(() => ran.length === 1, 'the worker to run the event', 10_000);
    expect(ran).toEqual([id]);
  });
});

describe.runIf(available)('runPgBossWorker (deprecated) beside a queue of its own', () => {
  it("without the queue or the hand-off, runs on the receiver's own hand-off", async () => {
    const { boss, receiver, ran, deliver } = await imagesQueue();
    const id = await deliver();
    await running(runPgBossWorker(receiver, { boss, pollingIntervalSeconds: 0.5 }));
    await until(() => ran.length === 1, 'the worker to run the event', 10_000);
    expect(ran).toEqual([id]);
    expect(await boss.getQueue('jobhook')).toBeNull();
    await expect(running(runPgBossWorker(receiver, { boss, queue: 'jobhook' }))).rejects.toThrow(
      invalidOptions(/runPgBossWorker: `queue` is "jobhook", but the hand-off's queue is "images"/),
    );
  });

  it('a receiver without a hand-off: refuses the default queue when it is missing, naming the queues there', async () => {
    const { boss, schema, deliver } = await imagesQueue();
    await deliver();
    const receiver = createReceiver({ secret: SECRET });
    await expect(running(runPgBossWorker(receiver, { boss, pollingIntervalSeconds: 0.5 }))).rejects.toThrow(
      invalidOptions(
        new RegExp(
          `runPgBossWorker: there is no pg-boss queue "jobhook" in schema "${schema}", whose queues are "images"`,
        ),
      ),
    );
    expect(await boss.getQueue('jobhook')).toBeNull();
  });

  it("in a fresh schema, where only pg-boss's own queues exist, starts on the default queue", async () => {
    const { boss } = await bossOnOwnSchema(cleanups, { schedule: true });
    const names = (await boss.getQueues()).map((queue) => queue.name);
    expect(names.length).toBeGreaterThan(0);
    expect(names.every((name) => name.startsWith('__pgboss__'))).toBe(true);
    const receiver = createReceiver({ secret: SECRET });
    await running(runPgBossWorker(receiver, { boss, pollingIntervalSeconds: 0.5 }));
    expect(await boss.getQueue('jobhook')).not.toBeNull();
  });

  it('given the hand-off, refuses another queue or a boss in another schema, naming both; otherwise runs', async () => {
    const { boss, schema, handoff, receiver, ran, deliver } = await imagesQueue();
    await expect(running(runPgBossWorker(receiver, { boss, queue: 'jobhook', handoff }))).rejects.toThrow(
      invalidOptions(/runPgBossWorker: `queue` is "jobhook", but the hand-off's queue is "images"/),
    );
    const other = await bossOnOwnSchema(cleanups);
    await expect(running(runPgBossWorker(receiver, { boss: other.boss, handoff }))).rejects.toThrow(
      invalidOptions(
        new RegExp(
          `runPgBossWorker: \`boss\` works in schema "${other.schema}", but the hand-off's schema is "${schema}"`,
        ),
      ),
    );
    const id = await deliver();
    await running(runPgBossWorker(receiver, { boss, handoff, pollingIntervalSeconds: 0.5 }));
    await until(() => ran.length === 1, 'the worker to run the event', 10_000);
    expect(ran).toEqual([id]);
  });
});
