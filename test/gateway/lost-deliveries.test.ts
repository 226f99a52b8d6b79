import { describe, expect, test } from 'vitest';
import { startGateway } from 'jobhook/testing';
import { createWebhook, listed, SECRET, sink, start, submit } from './delivery-support.js';
import { call, type Json } from './support.js';

/** Issue 22: the simulator can lose deliveries, so that reconciliation by polling can be tested. */
describe('deliveries.dropRate: deliveries never sent', () => {
  test('dropRate 1: no attempt reaches the receiver; the drop is recorded, shown by the console, and the counters stay put', async () => {
    const gateway = await start({ console: true, deliveries: { dropRate: 1 } });
    const endpoint = await sink();
    const id = await createWebhook(gateway, {
      url: endpoint.url,
      events: ['job.completed'],
      secret_key: SECRET,
    });
    const taskId = await submit(gateway);
    await gateway.settled();

    expect(endpoint.received).toHaveLength(0);
    expect(gateway.deliveries).toHaveLength(0);
    expect(gateway.dropped).toEqual([
      {
        webhookId: id,
        deliveryId: expect.stringMatching(/^msg_/),
        eventId: expect.stringMatching(/^evt_/),
        type: 'job.completed',
        taskId,
        at: expect.any(String),
      },
    ]);
    // Nothing was attempted, so nothing was sent or failed; the task itself is completed.
    expect(await listed(gateway, id)).toMatchObject({ total_sent: 0, total_failed: 0, last_sent_at: null });
    const task = await call(gateway.baseUrl, 'GET', `/api/v1/images/${taskId}`, { apiKey: gateway.apiKey });
    expect(task.json.data.status).toBe('completed');

    const state = (await call(gateway.baseUrl, 'GET', '/_console/state')).json;
    expect(state.deliveries).toEqual([
      expect.objectContaining({ deliveryId: gateway.dropped[0]!.deliveryId, state: 'dropped', attempts: [] }),
    ]);
  });

  test('a dropped delivery can be redelivered: then it is sent, with its webhook-id', async () => {
    const gateway = await start({ deliveries: { dropRate: 1, retryDelaysMs: [] } });
    const endpoint = await sink();
    await createWebhook(gateway, { url: endpoint.url, events: ['job.completed'] });
    await submit(gateway);
    await gateway.settled();
    const [dropped] = gateway.dropped;
    gateway.redeliver(dropped!.deliveryId);
    const delivery = await endpoint.next();
    expect(delivery.headers['webhook-id']).toBe(dropped!.deliveryId);
    expect(JSON.parse(delivery.body).id).toBe(dropped!.eventId);
  });

  test('dropRate 0.5 drops some deliveries and sends the others, each exactly once', async () => {
    const gateway = await start({ maxConcurrentJobs: 100, deliveries: { dropRate: 0.5, retryDelaysMs: [] } });
    const endpoint = await sink();
    await createWebhook(gateway, { url: endpoint.url, events: ['job.completed'] });
    const tasks = await Promise.all(Array.from({ length: 60 }, () => submit(gateway)));
    await gateway.settled();

    const sent = endpoint.received.map((r) => JSON.parse(r.body).data.task_id as string);
    const dropped = gateway.dropped.map((d) => d.taskId);
    // With 60 tasks, "none dropped" or "all dropped" has a chance of 2 in 10^18.
    expect(sent.length).toBeGreaterThan(0);
    expect(dropped.length).toBeGreaterThan(0);
    expect([...sent, ...dropped].sort()).toEqual([...tasks].sort());
  });

  test.each([-0.1, 1.5, Number.NaN, '0.5' as unknown as number])(
    'dropRate %s is refused with invalid_options naming the option',
    async (dropRate) => {
      await expect(startGateway({ deliveries: { dropRate } })).rejects.toMatchObject({
        code: 'invalid_options',
        message: expect.stringContaining('deliveries.dropRate'),
      });
    },
  );
});

describe('deliveries.retryDelaysMs: [] turns retries off', () => {
  test('a failed attempt is the last: one attempt, the delivery failed, the counter at 1', async () => {
    const gateway = await start({ console: true, deliveries: { retryDelaysMs: [] } });
    const endpoint = await sink(() => 500);
    const id = await createWebhook(gateway, { url: endpoint.url, events: ['job.completed'] });
    await submit(gateway);
    await gateway.settled();
    expect(endpoint.received).toHaveLength(1);
    expect(gateway.deliveries.map((d) => [d.attempt, d.status])).toEqual([[1, 500]]);
    expect(await listed(gateway, id)).toMatchObject({ total_failed: 1, last_error: 'HTTP 500' });
    const state = (await call(gateway.baseUrl, 'GET', '/_console/state')).json;
    expect(state.deliveries.map((d: Json) => d.state)).toEqual(['failed']);
  });

  test('a retry schedule that is not a list of non-negative numbers is refused', async () => {
    await expect(startGateway({ deliveries: { retryDelaysMs: [10, -1] } })).rejects.toMatchObject({
      code: 'invalid_options',
      message: expect.stringContaining('deliveries.retryDelaysMs'),
    });
  });
});
