// Handler types follow any Standard Schema given in `schemas`: zod 4, zod 3 and valibot; the event
// data has no index signature, and onAny narrows on event.type.
import * as v from 'valibot';
import { expectTypeOf, test } from 'vitest';
import { z } from 'zod';
import { z as z3 } from 'zod3';
import { createReceiver, type JobCompletedEvent, type JobFailedEvent } from 'jobhook';

test('a misspelt or misplaced field does not compile', () => {
  const receiver = createReceiver({ secret: 'k' });
  receiver.onJobFailed((event) => {
    // @ts-expect-error: image_url belongs to job.completed
    void event.data.image_url;
    // @ts-expect-error: a typo
    void event.data.task_idd;
    // @ts-expect-error: no index signature at the top either
    void event.datta;
  });
});

test('onAny narrows on event.type', () => {
  createReceiver({ secret: 'k' }).onAny((event) => {
    if (event.type === 'job.completed') {
      expectTypeOf(event).toEqualTypeOf<JobCompletedEvent>();
      expectTypeOf(event.data.image_url).toEqualTypeOf<string>();
    } else if (event.type === 'job.failed') {
      expectTypeOf(event.data.error.code).toEqualTypeOf<string>();
    } else {
      // An event type with no schema: verified, its fields unknown.
      const type: string = event.type;
      expectTypeOf(event.data).toEqualTypeOf<unknown>();
      return type === 'job.started';
    }
    return undefined;
  });
  createReceiver({ secret: 'k' }).onAny((event) => {
    switch (event.type) {
      case 'job.completed':
        return expectTypeOf(event.data.image_url).toEqualTypeOf<string>();
      case 'job.failed':
        return expectTypeOf(event.data.status).toEqualTypeOf<'failed'>();
      default:
        return expectTypeOf(event).not.toEqualTypeOf<JobFailedEvent>();
    }
  });
  createReceiver({ secret: 'k' }).onAny((event) => {
    // @ts-expect-error: a type with no schema is compared as a string; the error's type text says so
    return event.type === 'job.started';
  });
});

test.each([
  [
    'zod 4',
    z.looseObject({
      type: z.literal('job.started'),
      data: z.object({ task_id: z.string(), eta_seconds: z.number() }),
    }),
  ],
  [
    'zod 3',
    z3
      .object({
        type: z3.literal('job.started'),
        data: z3.object({ task_id: z3.string(), eta_seconds: z3.number() }),
      })
      .passthrough(),
  ],
  [
    'valibot',
    v.looseObject({
      type: v.literal('job.started'),
      data: v.object({ task_id: v.string(), eta_seconds: v.number() }),
    }),
  ],
] as const)('a %s schema types its handlers', (_name, schema) => {
  const receiver = createReceiver({ secret: 'k', schemas: { 'job.started': schema } });
  receiver.on('job.started', (event) => {
    expectTypeOf(event.data.eta_seconds).toEqualTypeOf<number>();
    expectTypeOf(event.type).toEqualTypeOf<'job.started'>();
  });
  receiver.onJobCompleted((event) => expectTypeOf(event.data.image_url).toEqualTypeOf<string>());
});

test('each library can replace a default schema, and the handler type follows', () => {
  const zod3 = createReceiver({
    secret: 'k',
    schemas: {
      'job.completed': z3.object({
        type: z3.literal('job.completed'),
        data: z3.object({ width: z3.number() }),
      }),
    },
  });
  zod3.onJobCompleted((event) => expectTypeOf(event.data.width).toEqualTypeOf<number>());
  const valibot = createReceiver({
    secret: 'k',
    schemas: {
      'job.failed': v.object({ type: v.literal('job.failed'), data: v.object({ retry_in: v.number() }) }),
    },
  });
  valibot.onJobFailed((event) => expectTypeOf(event.data.retry_in).toEqualTypeOf<number>());
  // @ts-expect-error: not a schema of any library
  createReceiver({ secret: 'k', schemas: { 'job.started': { parse: (x: unknown) => x } } });
});
