// createReceiver({ contract }) through every adapter, over real HTTP: a sender's own shape and
// signature reach the handlers as the typed events, a forgery is refused 401 and a repeat is a
// duplicate, the same on every way of mounting a receiver.
import { createReceiver, type JobCompletedEvent, type JobFailedEvent, type ReceiverContract } from 'jobhook';
import { signDelivery } from 'jobhook/testing';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { SECRET } from './fixtures.js';
import type { Running } from './http.js';
import { PATH, targets } from './targets.js';

/** Stripe's layout and the simulator's `nested` shape. */
const contract: ReceiverContract = {
  version: 1,
  signature: { scheme: 'stripe', header: 'stripe-signature', secretForm: 'utf8' },
  payload: {
    typePath: 'type',
    taskIdPath: 'data.object.id',
    imageUrlPath: 'data.object.output.url',
    errorPath: 'data.object.error',
    eventIdPath: 'id',
    createdAtPath: 'created',
  },
};

const nested = (type: 'job.completed' | 'job.failed', id: string) => ({
  id: `evt_${id}`,
  type,
  created: 1795255200,
  data: {
    object:
      type === 'job.completed'
        ? { id, status: 'completed', output: { url: `https://img.example/${id}.png` } }
        : { id, status: 'failed', output: null, error: { code: 'nsfw', message: 'Refused.' } },
  },
});

describe.each(targets)('$name', (target) => {
  let server: Running;
  let url: string;
  let events: (JobCompletedEvent | JobFailedEvent)[];

  beforeEach(async () => {
    events = [];
    const receiver = createReceiver({ secret: SECRET, contract, logger: { error: () => undefined } });
    receiver.onJobCompleted((event) => void events.push(event));
    receiver.onJobFailed((event) => void events.push(event));
    server = await target.start(receiver);
    url = `${server.origin}${PATH}`;
  });
  afterEach(() => server.close());

  const post = async (payload: unknown, secret = SECRET) => {
    const delivery = signDelivery({ secret, payload, scheme: 'stripe' });
    const response = await fetch(url, {
      method: 'POST',
      headers: delivery.headers,
      body: delivery.body as BodyInit,
    });
    return { status: response.status, body: (await response.json()) as Record<string, unknown> };
  };

  it('maps both outcomes to the typed events, dedupes a repeat and refuses a forgery', async () => {
    expect(await post(nested('job.completed', 'task_a'))).toEqual({ status: 200, body: { ok: true } });
    expect(await post(nested('job.failed', 'task_b'))).toEqual({ status: 200, body: { ok: true } });
    expect(await post(nested('job.completed', 'task_a'))).toEqual({
      status: 200,
      body: { ok: true, duplicate: true },
    });
    expect((await post(nested('job.completed', 'task_c'), `${SECRET}x`)).status).toBe(401);
    expect(events).toMatchObject([
      {
        id: 'evt_task_a',
        type: 'job.completed',
        created_at: '2026-11-21T10:00:00.000Z',
        data: { task_id: 'task_a', status: 'completed', image_url: 'https://img.example/task_a.png' },
      },
      {
        id: 'evt_task_b',
        type: 'job.failed',
        data: { task_id: 'task_b', status: 'failed', error: { code: 'nsfw', message: 'Refused.' } },
      },
    ]);
    expect(events).toHaveLength(2);
  });
});
