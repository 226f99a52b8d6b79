// deliveries: { retryDelaysMs, retryOn, idOnRetry }: a failed delivery is retried after the
// given waits, on the failures chosen, with the same delivery id or a fresh one per attempt; the
// webhook's counters count every attempt.
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { describe, expect, test } from 'vitest';
import { createReceiver } from 'jobhook';
import { cleanups, createWebhook, listed, SECRET, sink, start, submit } from './delivery-support.js';

/** A receiving endpoint that also notes when each request arrived (performance.now()). */
async function timedSink(respond: (index: number) => number) {
  const arrivals: number[] = [];
  const endpoint = await sink((_, index) => {
    arrivals.push(performance.now());
    return respond(index);
  });
  return { ...endpoint, arrivals };
}

describe('the retry schedule', () => {
  test('each retry waits at least its delay; one delivery id; the counters count each attempt', async () => {
    const delaysMs = [40, 80, 120];
    const gateway = await start({ deliveries: { retryDelaysMs: delaysMs } });
    const endpoint = await timedSink((index) => (index < 3 ? 503 : 200));
    const id = await createWebhook(gateway, {
      url: endpoint.url,
      events: ['job.completed'],
      secret_key: SECRET,
    });
    await submit(gateway);
    await gateway.settled();

    expect(gateway.deliveries.map((d) => [d.attempt, d.status])).toEqual([
      [1, 503],
      [2, 503],
      [3, 503],
      [4, 200],
    ]);
    const gaps = endpoint.arrivals.slice(1).map((at, i) => at - endpoint.arrivals[i]!);
    // A lower bound only: a timer may fire a millisecond early by the clock it is read against.
    gaps.forEach((gap, i) => expect(gap).toBeGreaterThanOrEqual(delaysMs[i]! - 1));
    const ids = endpoint.received.map((request) => request.headers['webhook-id']);
    expect(new Set(ids)).toEqual(new Set([gateway.deliveries[0]!.deliveryId]));
    expect(gateway.deliveries.map((d) => d.sentId)).toEqual(ids);
    expect(await listed(gateway, id)).toMatchObject({ total_sent: 1, total_failed: 3, last_error: null });
  });

  test("retryOn '5xx-or-no-answer': a 4xx ends the delivery, a 5xx is retried", async () => {
    const gateway = await start({ deliveries: { retryDelaysMs: [1, 1], retryOn: '5xx-or-no-answer' } });
    const notFound = await sink(() => 404);
    const failing = await sink((_, index) => (index === 0 ? 502 : 200));
    const refused = await createWebhook(gateway, { url: notFound.url, events: ['job.completed'] });
    await createWebhook(gateway, { url: failing.url, events: ['job.completed'] });
    await submit(gateway);
    await gateway.settled();
    expect(notFound.received).toHaveLength(1);
    expect(failing.received).toHaveLength(2);
    expect(await listed(gateway, refused)).toMatchObject({ total_failed: 1, last_error: 'HTTP 404' });
  });

  test("retryOn '5xx-or-no-answer': a time-out is retried", async () => {
    const gateway = await start({
      deliveries: { retryDelaysMs: [1], retryOn: '5xx-or-no-answer', timeoutMs: 50 },
    });
    const silent = createServer(() => undefined); // never answers
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
    cleanups.push(
      () => new Promise((resolve) => (silent.closeAllConnections(), silent.close(() => resolve()))),
    );
    const url = `http://127.0.0.1:${(silent.address() as AddressInfo).port}/hook`;
    const id = await createWebhook(gateway, { url, events: ['job.completed'] });
    await submit(gateway);
    await gateway.settled();
    expect(gateway.deliveries.map((d) => d.error)).toEqual([
      expect.stringMatching(/timed out/),
      expect.stringMatching(/timed out/),
    ]);
    expect(await listed(gateway, id)).toMatchObject({ total_failed: 2 });
  });

  test('by default any failed answer is retried, a 4xx too', async () => {
    const gateway = await start({ deliveries: { retryDelaysMs: [1] } });
    const endpoint = await sink(() => 400);
    await createWebhook(gateway, { url: endpoint.url, events: ['job.completed'] });
    await submit(gateway);
    await gateway.settled();
    expect(endpoint.received).toHaveLength(2);
  });

  test("idOnRetry 'new': a fresh, signed delivery id on each attempt; the payload id stays", async () => {
    const gateway = await start({ deliveries: { retryDelaysMs: [1, 1], idOnRetry: 'new' } });
    const endpoint = await sink((_, index) => (index < 2 ? 500 : 200));
    await createWebhook(gateway, { url: endpoint.url, events: ['job.completed'], secret_key: SECRET });
    await submit(gateway);
    await gateway.settled();

    const sent = endpoint.received.map((request) => request.headers['webhook-id']);
    expect(new Set(sent).size).toBe(3);
    expect(sent[0]).toBe(gateway.deliveries[0]!.deliveryId);
    expect(gateway.deliveries.map((d) => d.sentId)).toEqual(sent);
    expect(new Set(gateway.deliveries.map((d) => d.deliveryId)).size).toBe(1);
    expect(new Set(endpoint.received.map((request) => JSON.parse(request.body).id)).size).toBe(1);
    const receiver = createReceiver({ secret: SECRET, dedupe: false });
    for (const { headers, body } of endpoint.received) {
      expect((await receiver.receive({ headers, body })).status).toBe(200);
    }

    // A redelivery (by the delivery's id) is sent under a fresh id too.
    gateway.redeliver(gateway.deliveries[0]!.deliveryId);
    await gateway.settled();
    expect(sent).not.toContain(endpoint.received[3]!.headers['webhook-id']);
  });

  test("idOnRetry 'new' in another family changes that family's id header", async () => {
    const gateway = await start({
      signing: { scheme: 'stripe', idHeader: 'x-delivery-id' },
      deliveries: { retryDelaysMs: [1], idOnRetry: 'new' },
    });
    const endpoint = await sink((_, index) => (index === 0 ? 500 : 200));
    await createWebhook(gateway, { url: endpoint.url, events: ['job.completed'], secret_key: 'shh' });
    await submit(gateway);
    await gateway.settled();
    const [first, second] = endpoint.received.map((request) => request.headers['x-delivery-id']);
    expect(first).toMatch(/^msg_/);
    expect(second).toMatch(/^msg_/);
    expect(second).not.toBe(first);
  });
});
