import { expectTypeOf, test } from 'vitest';
import { z } from 'zod';
import { createReceiver, type DeliveryContext, type JobCompletedEvent, type ReceiverContract } from 'jobhook';
import type { UnknownEvent } from 'jobhook/extend';

test('typed handler arguments are inferred from the schemas', () => {
  const receiver = createReceiver({ secret: 'k' });
  receiver.onJobCompleted((event, context) => {
    expectTypeOf(event.data.image_url).toEqualTypeOf<string>();
    expectTypeOf(event.data.task_id).toEqualTypeOf<string>();
    expectTypeOf(event.type).toEqualTypeOf<'job.completed'>();
    expectTypeOf(context).toEqualTypeOf<DeliveryContext>();
  });
  receiver.onJobFailed((event) => {
    expectTypeOf(event.data.error.code).toEqualTypeOf<string>();
    expectTypeOf(event.data.status).toEqualTypeOf<'failed'>();
  });
  receiver.on('job.failed', (event) => {
    expectTypeOf(event.type).toEqualTypeOf<'job.failed'>();
    expectTypeOf(event.data.error.message).toEqualTypeOf<string>();
  });
  receiver.onAny((event) => {
    expectTypeOf(event).toExtend<JobCompletedEvent | UnknownEvent | { type: 'job.failed' }>();
  });
});

test('a wrong event name does not compile', () => {
  const receiver = createReceiver({ secret: 'k' });
  // @ts-expect-error: there is no such event type
  receiver.on('job.complete', () => undefined);
  receiver.onJobFailed((event) => {
    // @ts-expect-error: image_url belongs to job.completed; on job.failed it is not a string
    const url: string = event.data.image_url;
    return url;
  });
});

test('a replaced or added schema changes the handler types', () => {
  const receiver = createReceiver({
    secret: 'k',
    schemas: {
      'job.completed': z.looseObject({
        type: z.literal('job.completed'),
        data: z.object({ task_id: z.string(), image_url: z.url(), width: z.number() }),
      }),
      'job.started': z.object({ type: z.literal('job.started'), data: z.object({ task_id: z.string() }) }),
    },
  });
  receiver.onJobCompleted((event) => expectTypeOf(event.data.width).toEqualTypeOf<number>());
  receiver.on('job.started', (event) => expectTypeOf(event.data.task_id).toEqualTypeOf<string>());
  receiver.onJobFailed((event) => expectTypeOf(event.data.error.code).toEqualTypeOf<string>());
});

test('a contract: handlers keep their types; a scheme or a parameter that does not exist does not compile', () => {
  const contract: ReceiverContract = {
    signature: { scheme: 'hmac-sha256', header: 'x-signature', encoding: 'base64' },
    payload: { typePath: 'event', taskIdPath: 'task_id', imageUrlPath: 'image_url' },
  };
  const receiver = createReceiver({ secret: 'k', contract });
  receiver.onJobCompleted((event) => expectTypeOf(event.data.image_url).toEqualTypeOf<string>());
  createReceiver({ secret: 'k', contract: { contract, notes: [] } as { contract: ReceiverContract } });
  // @ts-expect-error: no such scheme
  createReceiver({ secret: 'k', contract: { ...contract, signature: { scheme: 'ed25519' } } });
  // @ts-expect-error: hmac-sha256 needs its header
  createReceiver({ secret: 'k', contract: { ...contract, signature: { scheme: 'hmac-sha256' } } });
  // JSON read from a file types its scheme as a string: an assertion adopts it.
  const report = JSON.parse('{}') as { contract: { signature: { scheme: string }; payload: object } };
  createReceiver({ secret: 'k', contract: report.contract as ReceiverContract });
});
