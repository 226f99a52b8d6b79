// createReceiver({ contract, reconcile }) against the simulator sending another contract (GitHub-like
// signature, flat payload with no event id): a mapped webhook and a poll of its task converge on
// one key, so the handlers run once whichever comes first.
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createReceiver, memoryJobTracker, type ReceiverContract } from 'jobhook';
import { createClient } from 'jobhook/client';
import { nodeHandler } from 'jobhook/node';
import { startGateway, type Gateway } from 'jobhook/testing';
import { afterEach, expect, it } from 'vitest';
import { SECRET } from '../fixtures.js';

const contract: ReceiverContract = {
  signature: { scheme: 'hmac-sha256', header: 'x-hub-signature-256', prefix: 'sha256=', encoding: 'hex' },
  payload: {
    typePath: 'event',
    taskIdPath: 'task_id',
    imageUrlPath: 'image_url',
    createdAtPath: 'timestamp',
  },
};

const closers: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const close of closers.splice(0).reverse()) await close();
});

async function setUp(dropRate: number) {
  const gateway: Gateway = await startGateway({
    signing: 'hmac-sha256',
    payload: 'flat',
    jobs: { stepMs: 1 },
    deliveries: { dropRate, retryDelaysMs: [] },
  });
  const jobs = memoryJobTracker();
  const client = createClient({ baseUrl: gateway.baseUrl, apiKey: gateway.apiKey, jobs });
  const receiver = createReceiver({
    secret: SECRET,
    contract,
    reconcile: { client, jobs, afterMs: 0, intervalMs: 0 },
  });
  const runs: { taskId: string; source: string }[] = [];
  receiver.onJobCompleted(
    (event, context) => void runs.push({ taskId: event.data.task_id, source: context.source }),
  );
  const server = createServer(nodeHandler(receiver));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/`;
  closers.push(
    () => gateway.close(),
    () => receiver.close(),
    () => new Promise((resolve) => server.close(resolve)),
  );
  await receiver.register({ client, url });
  return { gateway, client, receiver, runs, jobs };
}

it('the mapped webhook settles its task: no poll runs it again', async () => {
  const t = await setUp(0);
  const { task_id } = await t.client.images.generate({ model: 'm', prompt: 'a cat' });
  await t.gateway.settled();
  await expect.poll(() => t.runs).toEqual([{ taskId: task_id, source: 'webhook' }]);
  await expect.poll(() => t.jobs.size).toBe(0);
  t.jobs.track(task_id, 0);
  expect(await t.receiver.reconcileOnce()).toMatchObject({ polled: 1, dispatched: 0 });
  expect(t.runs).toHaveLength(1);
});

it('a polled outcome first: the mapped webhook that comes later is a duplicate', async () => {
  const t = await setUp(1);
  const { task_id } = await t.client.images.generate({ model: 'm', prompt: 'a cat' });
  await t.gateway.settled();
  expect(await t.receiver.reconcileOnce()).toMatchObject({ polled: 1, dispatched: 1 });
  t.gateway.redeliver(t.gateway.dropped[0]!.deliveryId);
  await t.gateway.settled();
  expect(t.gateway.deliveries.map((attempt) => attempt.answer)).toEqual(['{"ok":true,"duplicate":true}']);
  expect(t.runs).toEqual([{ taskId: task_id, source: 'poll' }]);
});
