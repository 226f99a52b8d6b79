// createReceiver's options, as JavaScript callers may get them wrong: an unknown key is refused
// naming where it belongs, and a handler time-out that outlasts the sender's is warned about.
import { createReceiver, type ReceiverOptions } from 'jobhook';
import { expect, test } from 'vitest';
import { SECRET } from '../fixtures.js';

function refusal(options: unknown): unknown {
  try {
    createReceiver(options as ReceiverOptions);
  } catch (error) {
    return error;
  }
  return undefined;
}

test('refuses an unknown option, naming where it belongs or the option it resembles', () => {
  expect(refusal({ secret: SECRET, path: '/webhooks' })).toMatchObject({
    code: 'invalid_options',
    message: expect.stringMatching(
      /createReceiver has no option `path`: it belongs in the adapter's options, e.g. `nodeHandler\(receiver, \{ path \}\)`/,
    ) as string,
  });
  expect(refusal({ secret: SECRET, handlerTimeout: 5_000 })).toMatchObject({
    code: 'invalid_options',
    message: expect.stringMatching(/did you mean `handlerTimeoutMs`\?/) as string,
  });
  expect(
    refusal({ secret: SECRET, handlerTimeoutMs: 5_000, maxBodyBytes: 1024, logger: console }),
  ).toBeUndefined();
});

test('a handler given as an option is told it is a method of the receiver', () => {
  for (const method of ['onError', 'onJobCompleted', 'onAny']) {
    expect((refusal({ secret: SECRET, [method]: () => {} }) as Error | undefined)?.message).toContain(
      `\`${method}\` is a method of the receiver: \`createReceiver({ secret }).${method}(handler)\``,
    );
  }
});

test('warns once at start-up when handlerTimeoutMs is not below the sender time-out, and not otherwise', () => {
  const warnings: string[] = [];
  const logger = { error: () => {}, warn: (line: string) => warnings.push(line) };
  createReceiver({ secret: SECRET, logger, senderTimeoutMs: 15_000 });
  expect(warnings).toEqual([]);
  createReceiver({ secret: SECRET, logger, senderTimeoutMs: 5_000 });
  expect(warnings).toHaveLength(1);
  expect(warnings[0]).toMatch(/handlerTimeoutMs \(10000 ms\) is not below the sender's time-out \(5000 ms\)/);
  createReceiver({ secret: SECRET, logger, handlerTimeoutMs: 0, senderTimeoutMs: 60_000 });
  expect(warnings).toHaveLength(2);
  expect(refusal({ secret: SECRET, senderTimeoutMs: -1 })).toMatchObject({ code: 'invalid_options' });
});
