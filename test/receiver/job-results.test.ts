// The receiver's job results: what is recorded (and when), the bounds of the recent store, the
// watchers, and a channel between two receivers.
import { createReceiver, type JobResult, type Receiver } from 'jobhook';
import type { ResultChannel } from 'jobhook/extend';
import { signDelivery } from 'jobhook/testing';
import { describe, expect, test } from 'vitest';
import { jobResults } from '../../src/results/job-results.js';
import { completed, failed, SECRET } from '../adapters/fixtures.js';

const quiet = { error: () => undefined };

function deliver(receiver: Pick<Receiver, 'receive'>, payload: object, secret = SECRET) {
  const { headers, body } = signDelivery({ secret, payload });
  return receiver.receive({ headers, body });
}

/** Two receivers "in two processes" joined by a channel that passes JSON, as Redis would. */
function pairedChannels(): [ResultChannel, ResultChannel] {
  const subscribers: ((result: JobResult) => void)[] = [];
  const channel = (): ResultChannel => ({
    publish: (result) => {
      const wire = JSON.stringify(result);
      for (const subscriber of subscribers) queueMicrotask(() => subscriber(JSON.parse(wire) as JobResult));
    },
    subscribe: (onResult) => void subscribers.push(onResult),
  });
  return [channel(), channel()];
}

describe('what the receiver records', () => {
  test('a verified, valid job.completed or job.failed, before its handlers run and whatever they do', async () => {
    let seenByHandler: JobResult | undefined;
    const receiver = createReceiver({ secret: SECRET, logger: quiet }).onJobCompleted((event) => {
      seenByHandler = receiver.results.get(event.data.task_id);
      throw new Error('the handler fails');
    });
    const done = completed();
    expect((await deliver(receiver, done)).status).toBe(500);
    expect(seenByHandler).toMatchObject({ taskId: done.data.task_id, status: 'completed' });

    const fail = failed();
    expect((await deliver(receiver, fail)).status).toBe(200);
    expect(receiver.results.get(fail.data.task_id)).toMatchObject({
      status: 'failed',
      data: { error: fail.data.error },
    });
  });

  test('nothing from a forged, unsigned or invalid delivery', async () => {
    const receiver = createReceiver({ secret: SECRET, logger: quiet });
    const forged = completed();
    expect((await deliver(receiver, forged, 'whsec_bm90LXRoZS1zZWNyZXQ=')).status).toBe(401);
    const invalid = completed();
    const broken = { ...invalid, data: { ...invalid.data, image_url: 42 } };
    expect((await deliver(receiver, broken)).status).toBe(400);
    expect(receiver.results.get(forged.data.task_id)).toBeUndefined();
    expect(receiver.results.get(invalid.data.task_id)).toBeUndefined();
  });

  test('results: false keeps nothing', async () => {
    const receiver = createReceiver({ secret: SECRET, results: false });
    const done = completed();
    await deliver(receiver, done);
    expect(receiver.results.get(done.data.task_id)).toBeUndefined();
  });

  test('refuses bounds that are not positive whole numbers', () => {
    expect(() => createReceiver({ secret: SECRET, results: { maxEntries: 0 } })).toThrow(/maxEntries/);
    expect(() => createReceiver({ secret: SECRET, results: { maxAgeMs: -1 } })).toThrow(/maxAgeMs/);
  });
});

describe('the recent store', () => {
  const event = (taskId: string) => ({ data: { task_id: taskId, status: 'completed', image_url: 'u' } });

  test('keeps at most maxEntries, dropping the oldest', () => {
    const results = jobResults({ maxEntries: 3 }, quiet);
    for (const id of ['a', 'b', 'c', 'd']) results.receive('job.completed', event(id));
    expect(['a', 'b', 'c', 'd'].map((id) => results.get(id)?.taskId)).toEqual([undefined, 'b', 'c', 'd']);
  });

  test('forgets a result after maxAgeMs', () => {
    let now = 1_000;
    const results = jobResults({ maxAgeMs: 100 }, quiet, () => now);
    results.receive('job.completed', event('a'));
    now += 50;
    results.receive('job.completed', event('b'));
    now += 60;
    expect(results.get('a')).toBeUndefined();
    expect(results.get('b')?.receivedAt).toBe(1_050);
  });

  test('lookups between arrivals see every result, the latest of a task, and none past the bounds', () => {
    let now = 1_000;
    const results = jobResults({ maxEntries: 3, maxAgeMs: 100 }, quiet, () => now);
    const failed = (taskId: string) => ({
      data: { task_id: taskId, status: 'failed', error: { code: 'x', message: 'y' } },
    });
    results.receive('job.failed', failed('a'));
    expect(results.get('a')?.status).toBe('failed');
    // The same task again (a redelivery, or a later outcome): the latest is the one found.
    now += 10;
    results.receive('job.completed', event('a'));
    results.receive('job.completed', event('b'));
    expect(results.get('a')?.status).toBe('completed');
    // The older result of `a` is dropped first (count) and must not take the newer one with it.
    results.receive('job.completed', event('c'));
    expect(results.get('a')?.status).toBe('completed');
    expect(results.get('b')?.taskId).toBe('b');
    // Age: everything but what arrived in the last 100 ms goes, indexed or not.
    now += 95;
    results.receive('job.completed', event('d'));
    expect(results.get('a')).toBeUndefined();
    expect(results.get('d')?.taskId).toBe('d');
    for (let i = 0; i < 50; i++) results.receive('job.completed', event(`e${i}`));
    expect(results.get('d')).toBeUndefined();
    expect(['e46', 'e47', 'e48', 'e49'].map((id) => results.get(id)?.taskId)).toEqual([
      undefined,
      'e47',
      'e48',
      'e49',
    ]);
  });

  // The results sit in a ring that grows up to maxEntries and wraps: across growths, wraps and
  // lookups at any moment, a lookup finds what a plain list of the latest results would.
  test('across many arrivals and lookups, the latest kept result of each task, as a plain list says', () => {
    let now = 1_000;
    const maxEntries = 37;
    const maxAgeMs = 500;
    const results = jobResults({ maxEntries, maxAgeMs }, quiet, () => now);
    let model: { taskId: string; receivedAt: number }[] = [];
    let seed = 7;
    const next = (n: number) => (seed = (seed * 1_103_515_245 + 12_345) % 2_147_483_648) % n;
    for (let i = 0; i < 3_000; i++) {
      now += next(3) === 0 ? next(40) : 0;
      if (next(4) === 0) {
        const taskId = `t${next(60)}`;
        model = model.filter((r) => r.receivedAt + maxAgeMs > now);
        const expected = model.findLast((r) => r.taskId === taskId)?.receivedAt;
        expect(results.get(taskId)?.receivedAt).toBe(expected);
      } else {
        const taskId = `t${next(60)}`;
        results.receive('job.completed', event(taskId));
        model = [...model.filter((r) => r.receivedAt + maxAgeMs > now), { taskId, receivedAt: now }].slice(
          -maxEntries,
        );
      }
    }
  });

  test('ignores other event types and payloads without a task id', () => {
    const results = jobResults(undefined, quiet);
    results.receive('job.started', event('a'));
    results.receive('job.completed', { data: { status: 'completed' } });
    results.receive('job.completed', 'not an object');
    expect(results.get('a')).toBeUndefined();
  });
});

describe('watchers', () => {
  test('are called once with the result, then removed; stop() removes one early', () => {
    const results = jobResults(undefined, quiet);
    const calls: string[] = [];
    results.watch('a', (r) => calls.push(`first ${r.status}`));
    const stop = results.watch('a', () => calls.push('stopped'));
    results.watch('a', (r) => calls.push(`third ${r.status}`));
    expect(results.watching).toBe(3);
    stop();
    stop();
    expect(results.watching).toBe(2);
    results.receive('job.failed', { data: { task_id: 'a', status: 'failed', error: {} } });
    results.receive('job.failed', { data: { task_id: 'a', status: 'failed', error: {} } });
    expect(calls).toEqual(['first failed', 'third failed']);
    expect(results.watching).toBe(0);
  });

  test('a watcher that throws is logged and does not keep the others from their result', () => {
    const lines: string[] = [];
    const results = jobResults(undefined, { error: (line) => lines.push(line) });
    let woken = false;
    results.watch('a', () => {
      throw new Error('boom');
    });
    results.watch('a', () => (woken = true));
    results.receive('job.completed', event('a'));
    expect(woken).toBe(true);
    expect(lines).toEqual([expect.stringMatching(/watcher failed: boom/)]);
  });

  const event = (taskId: string) => ({ data: { task_id: taskId, status: 'completed', image_url: 'u' } });
});

describe('a channel between instances', () => {
  test('a delivery received by one receiver wakes a watcher on the other and lands in both stores', async () => {
    const [one, two] = pairedChannels();
    const first = createReceiver({ secret: SECRET, results: one });
    const second = createReceiver({ secret: SECRET, results: { channel: two, maxEntries: 10 } });
    const done = completed();
    const woken = new Promise<JobResult>((resolve) => second.results.watch(done.data.task_id, resolve));
    await deliver(first, done);
    expect(await woken).toMatchObject({
      taskId: done.data.task_id,
      data: { image_url: done.data.image_url },
    });
    expect(second.results.get(done.data.task_id)?.status).toBe('completed');
  });

  test('a channel that fails to publish or subscribe is logged; the delivery still answers 200', async () => {
    const lines: string[] = [];
    const receiver = createReceiver({
      secret: SECRET,
      logger: { error: (line) => lines.push(line) },
      results: {
        publish: () => Promise.reject(new Error('publish down')),
        subscribe: () => Promise.reject(new Error('subscribe down')),
      },
    });
    expect((await deliver(receiver, completed())).status).toBe(200);
    await new Promise((resolve) => setImmediate(resolve));
    expect(lines).toEqual(
      expect.arrayContaining([
        expect.stringMatching(/result channel failed: subscribe down/),
        expect.stringMatching(/could not publish a job result.*publish down/),
      ]),
    );
  });

  test('receiver.close() closes the channel once', async () => {
    let closed = 0;
    const receiver = createReceiver({
      secret: SECRET,
      results: { publish: () => undefined, subscribe: () => undefined, close: () => void closed++ },
    });
    await receiver.close();
    await receiver.close();
    expect(closed).toBe(1);
  });
});

describe('what a recent result keeps', () => {
  test('only the fields a waiter reads, never the rest of a large payload', async () => {
    const receiver = createReceiver({ secret: SECRET });
    const big = completed();
    const data = { ...big.data, thumbnail: 'x'.repeat(256 * 1024) };
    const { headers, body } = signDelivery({ secret: SECRET, payload: { ...big, data } });
    expect((await receiver.receive({ headers, body })).status).toBe(200);
    const kept = receiver.results.get(data.task_id)!;
    expect(kept.data).toEqual({
      task_id: data.task_id,
      status: 'completed',
      image_url: data.image_url,
    });
    expect(JSON.stringify(kept).length).toBeLessThan(1024);

    const lost = failed();
    const withError = { ...lost.data, error: { ...lost.data.error, trace: 'y'.repeat(10_000) } };
    const signed = signDelivery({ secret: SECRET, payload: { ...lost, data: withError } });
    await receiver.receive({ headers: signed.headers, body: signed.body });
    expect(receiver.results.get(withError.task_id)!.data.error).toEqual(lost.data.error);
  });
});
