// `schemas` takes any Standard Schema v1 validator: the same deliveries validated by zod 4, zod 3
// and valibot (sync), and by an asynchronous valibot schema; unknown fields are kept by the
// default schemas; a mismatch is a 400 naming the path, whatever the library's path format.
import * as v from 'valibot';
import { createReceiver } from 'jobhook';
import type { StandardSchemaV1 } from 'jobhook/extend';
import { signDelivery } from 'jobhook/testing';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { z as z3 } from 'zod3';
import { SECRET } from '../fixtures.js';

const started = (data: Record<string, unknown>) => ({
  id: 'evt_1',
  type: 'job.started',
  created_at: '2026-11-21T10:00:00Z',
  data,
});

const schemas: [string, StandardSchemaV1][] = [
  ['zod 4', z.looseObject({ type: z.literal('job.started'), data: z.object({ eta_seconds: z.number() }) })],
  [
    'zod 3',
    z3
      .object({ type: z3.literal('job.started'), data: z3.object({ eta_seconds: z3.number() }) })
      .passthrough(),
  ],
  ['valibot', v.looseObject({ type: v.literal('job.started'), data: v.object({ eta_seconds: v.number() }) })],
  [
    'valibot, asynchronous',
    v.looseObjectAsync({
      type: v.literal('job.started'),
      data: v.objectAsync({
        eta_seconds: v.pipeAsync(
          v.number(),
          v.checkAsync(async (n) => n >= 0, 'negative'),
        ),
      }),
    }),
  ],
];

describe.each(schemas)('a %s schema', (_name, schema) => {
  async function deliver(payload: unknown) {
    const seen: unknown[] = [];
    const receiver = createReceiver({ secret: SECRET, schemas: { 'job.started': schema } });
    receiver.on('job.started', (event) => void seen.push(event));
    const delivery = signDelivery({ secret: SECRET, payload });
    const answer = await receiver.receive({ headers: delivery.headers, body: delivery.body });
    return { status: answer.status, body: JSON.parse(answer.body) as { error?: { message: string } }, seen };
  }

  it('validates, and hands the handler its output', async () => {
    const payload = started({ eta_seconds: 12 });
    const { status, seen } = await deliver(payload);
    expect(status).toBe(200);
    expect(seen).toEqual([payload]);
  });

  it('answers 400 naming the path of what does not match, and runs nothing', async () => {
    const { status, body, seen } = await deliver(started({ eta_seconds: 'soon' }));
    expect(status).toBe(400);
    expect(body.error?.message).toMatch(
      /^The job\.started payload does not match its schema: data\.eta_seconds: /,
    );
    expect(seen).toEqual([]);
  });
});

it('the default schemas keep fields the gateway adds later', async () => {
  const seen: unknown[] = [];
  const receiver = createReceiver({ secret: SECRET }).onJobCompleted((event) => void seen.push(event));
  const payload = {
    id: 'evt_2',
    type: 'job.completed',
    created_at: '2026-11-21T10:00:00Z',
    region: 'eu',
    data: { task_id: 't', status: 'completed', image_url: 'https://img.example/1.png', width: 1024 },
  };
  const delivery = signDelivery({ secret: SECRET, payload });
  expect((await receiver.receive({ headers: delivery.headers, body: delivery.body })).status).toBe(200);
  expect(seen).toEqual([payload]);
});
