import { expectTypeOf, test } from 'vitest';
import { z } from 'zod';
import { createReceiver, type JobResult } from 'jobhook';
import {
  createClient,
  type CompletedImageTask,
  type GatewayError,
  type JobFailedError,
  type WaitTimeoutError,
} from 'jobhook/client';

const client = createClient({ apiKey: 'k', baseUrl: 'https://gw.example' });

test('a wait resolves with a completed task whose image_url is a string', () => {
  const receiver = createReceiver({ secret: 's' });
  expectTypeOf(
    client.images.generateAndWait({ model: 'm', prompt: 'p' }, { receiver }),
  ).resolves.toEqualTypeOf<CompletedImageTask>();
  expectTypeOf(client.images.waitFor('task_1')).resolves.toEqualTypeOf<CompletedImageTask>();
  expectTypeOf<CompletedImageTask['status']>().toEqualTypeOf<'completed'>();
  expectTypeOf<CompletedImageTask['image_url']>().toEqualTypeOf<string>();
});

test('any receiver can be waited on, custom schemas included', () => {
  const custom = createReceiver({
    secret: 's',
    schemas: { 'job.completed': z.looseObject({ type: z.literal('job.completed'), extra: z.string() }) },
  });
  void client.images.waitFor('task_1', { receiver: custom, timeoutMs: 1000, pollIntervalMs: 100 });
  expectTypeOf(custom.results.get('task_1')).toEqualTypeOf<JobResult | undefined>();
  // @ts-expect-error: not a receiver
  void client.images.waitFor('task_1', { receiver: {} });
});

test('the wait errors belong to the client error family', () => {
  expectTypeOf<JobFailedError>().toExtend<GatewayError>();
  expectTypeOf<WaitTimeoutError>().toExtend<GatewayError>();
  expectTypeOf<JobFailedError['taskId']>().toEqualTypeOf<string>();
  expectTypeOf<WaitTimeoutError['taskId']>().toEqualTypeOf<string>();
});
