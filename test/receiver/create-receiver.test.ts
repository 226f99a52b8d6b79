import { expect, test, vi } from 'vitest';
import { createReceiver, JobhookError } from 'jobhook';
import { completedPayload } from '../fixtures.js';

test.each([
  ['no options', undefined],
  ['no secret', {}],
  ['an empty secret', { secret: '' }],
  ['an empty list of secrets', { secret: [] }],
  ['a list with an empty secret', { secret: ['ok', ''] }],
])('creating a receiver with %s is a JobhookError naming the fix', (_case, options) => {
  const create = () => createReceiver(options as never);
  expect(create).toThrow(JobhookError);
  expect(create).toThrow(/secret/);
});

test('the missing-secret error names confirm mode for a sender that signs nothing jobhook checks', () => {
  expect(() => createReceiver({})).toThrow(/confirm: \{ client, jobs \}/);
});

test('dangerouslySkipVerification accepts unsigned deliveries', async () => {
  const receiver = createReceiver({ dangerouslySkipVerification: true });
  const handler = vi.fn();
  receiver.onJobCompleted(handler);
  const response = await receiver.receive({ headers: {}, body: JSON.stringify(completedPayload()) });
  expect(response.status).toBe(200);
  expect(handler).toHaveBeenCalledTimes(1);
});

test.each([
  ['toleranceSeconds', -1],
  ['maxBodyBytes', 0],
  ['maxBodyBytes', 1.5],
  ['handlerTimeoutMs', Number.NaN],
])('rejects %s = %s', (name, value) => {
  expect(() => createReceiver({ secret: 'k', [name]: value })).toThrow(new RegExp(name));
});

test('a handler that is not a function is refused when registered', () => {
  const receiver = createReceiver({ secret: 'k' });
  expect(() => receiver.onJobCompleted('nope' as never)).toThrow(/function/);
});

test('handlers of one delivery run concurrently', async () => {
  const receiver = createReceiver({ secret: 'k', dangerouslySkipVerification: true, handlerTimeoutMs: 2000 });
  // Each handler waits for the other to start: run one after the other, they would time out.
  let releaseFirst!: () => void;
  const secondStarted = new Promise<void>((resolve) => (releaseFirst = resolve));
  receiver.onJobCompleted(() => secondStarted);
  receiver.onJobCompleted(() => releaseFirst());
  const response = await receiver.receive({ headers: {}, body: JSON.stringify(completedPayload()) });
  expect(response.status).toBe(200);
});

test('an onError handler that throws is logged, and the delivery still answers 500', async () => {
  const logger = { error: vi.fn() };
  const receiver = createReceiver({ dangerouslySkipVerification: true, logger });
  receiver.onJobCompleted(() => {
    throw new Error('boom');
  });
  receiver.onError(() => {
    throw new Error('reporting failed');
  });
  const response = await receiver.receive({ headers: {}, body: JSON.stringify(completedPayload()) });
  expect(response.status).toBe(500);
  expect(logger.error).toHaveBeenCalledWith(expect.stringContaining('reporting failed'));
});

// Without onError a handler failure is logged with the stack of what it threw (issue 24: the
// failing line must be findable from the log): test/receiver/failure-log.test.ts.

test.each([
  ['a negative number', -1],
  ['NaN', Number.NaN],
  ['a string', '100'],
  ['null', null],
])(
  'close({ timeoutMs }) with %s rejects with JobhookError invalid_options naming the option',
  async (_case, timeoutMs) => {
    const receiver = createReceiver({ secret: 'whsec_dGVzdA==' });
    const closing = receiver.close({ timeoutMs: timeoutMs as never });
    await expect(closing).rejects.toBeInstanceOf(JobhookError);
    await expect(closing).rejects.toMatchObject({
      code: 'invalid_options',
      message: expect.stringMatching(/timeoutMs/),
    });
  },
);
