// startGateway({ payload }): each built-in shape exactly as docs/gateway-simulator.md writes it,
// a shape of the test's own, and the same body on every attempt and redelivery.
import { describe, expect, test } from 'vitest';
import type { PayloadShape } from 'jobhook/testing';
import { call } from './support.js';
import { createWebhook, SECRET, sink, start, submit } from './delivery-support.js';

const failing = { jobs: { stepMs: 1, outcome: () => ({ status: 'failed' as const }) } };

/** The body and headers of the one delivery of a job that ends as `outcome` says. */
async function delivered(payload: PayloadShape, options = {}) {
  const gateway = await start({ payload, ...options });
  const endpoint = await sink();
  await createWebhook(gateway, {
    url: endpoint.url,
    events: ['job.completed', 'job.failed'],
    secret_key: SECRET,
  });
  const taskId = await submit(gateway);
  const delivery = await endpoint.next();
  const task = (await call(gateway.baseUrl, 'GET', `/api/v1/images/${taskId}`, { apiKey: gateway.apiKey }))
    .json.data;
  return { gateway, endpoint, task, headers: delivery.headers, body: JSON.parse(delivery.body) };
}

const seconds = (iso: string) => Math.floor(Date.parse(iso) / 1000);

describe('payload shapes', () => {
  test("'default': { id, type, created_at, data: { task_id, status, image_url } }", async () => {
    const { body, task, headers } = await delivered('default');
    expect(body).toEqual({
      id: expect.stringMatching(/^evt_/),
      type: 'job.completed',
      created_at: task.updated_at,
      data: { task_id: task.task_id, status: 'completed', image_url: task.image_url },
    });
    expect(headers['x-event-type']).toBeUndefined();
  });

  test("'flat': { event, task_id, status, image_url | error, timestamp }", async () => {
    const completed = await delivered('flat');
    expect(completed.body).toEqual({
      event: 'job.completed',
      task_id: completed.task.task_id,
      status: 'completed',
      image_url: completed.task.image_url,
      timestamp: seconds(completed.task.updated_at),
    });
    const failed = await delivered('flat', failing);
    expect(failed.body).toEqual({
      event: 'job.failed',
      task_id: failed.task.task_id,
      status: 'failed',
      error: failed.task.error,
      timestamp: seconds(failed.task.updated_at),
    });
  });

  test("'nested': { id, type, created, data: { object: { id, status, output, error? } } }", async () => {
    const completed = await delivered('nested');
    expect(completed.body).toEqual({
      id: expect.stringMatching(/^evt_/),
      type: 'job.completed',
      created: seconds(completed.task.updated_at),
      data: {
        object: {
          id: completed.task.task_id,
          status: 'completed',
          output: { url: completed.task.image_url },
        },
      },
    });
    const failed = await delivered('nested', failing);
    expect(failed.body.data.object).toEqual({
      id: failed.task.task_id,
      status: 'failed',
      output: null,
      error: failed.task.error,
    });
  });

  test("'type-in-header': the default without type, which comes as x-event-type", async () => {
    const { body, task, headers } = await delivered('type-in-header', failing);
    expect(headers['x-event-type']).toBe('job.failed');
    expect(body).toEqual({
      id: expect.stringMatching(/^evt_/),
      created_at: task.updated_at,
      data: { task_id: task.task_id, status: 'failed', error: task.error },
    });
  });

  test('a function reshapes the default payload; retries and a redelivery send the same body', async () => {
    const shape: PayloadShape = (event) => ({ kind: event.type, job: event.data.task_id });
    const gateway = await start({ payload: shape, deliveries: { retryDelaysMs: [1] } });
    const endpoint = await sink((_, index) => (index === 0 ? 500 : 200));
    await createWebhook(gateway, { url: endpoint.url, events: ['job.completed'] });
    const taskId = await submit(gateway);
    await gateway.settled();
    gateway.redeliver(gateway.deliveries[0]!.deliveryId);
    await gateway.settled();
    const bodies = endpoint.received.map((request) => request.body);
    expect(bodies).toEqual(Array(3).fill(JSON.stringify({ kind: 'job.completed', job: taskId })));
  });

  test.each([['xml'], [42]])('startGateway refuses payload %j, naming the option', async (payload) => {
    await expect(start({ payload: payload as PayloadShape })).rejects.toThrow(
      /startGateway: `payload` must be "default", "flat", "nested", "type-in-header" or a function/,
    );
  });
});
