// A handler's failure logged with no onError: the line must lead to the failing line of code (the
// stack of what the handler threw), and never carry the secret, even where the stack quotes it.
import { createReceiver, type Receiver } from 'jobhook';
import { signDelivery } from 'jobhook/testing';
import { expect, test } from 'vitest';
import { completedPayload, SECRET } from '../fixtures.js';

function deliver(receiver: Pick<Receiver, 'receive'>) {
  const delivery = signDelivery({ secret: SECRET, payload: completedPayload() });
  return receiver.receive({ headers: delivery.headers, body: delivery.body });
}

test("logs the stack of a handler's error, so the failing function and file can be found", async () => {
  const lines: string[] = [];
  const receiver = createReceiver({ secret: SECRET, logger: { error: (line) => lines.push(line) } });
  receiver.onJobCompleted(function saveToDb() {
    JSON.parse('{bad');
  });
  expect((await deliver(receiver)).status).toBe(500);
  expect(lines).toHaveLength(1);
  expect(lines[0]).toMatch(/A job\.completed handler failed: .*JSON/);
  expect(lines[0]).toContain('caused by SyntaxError');
  expect(lines[0]).toMatch(/at saveToDb \(.*failure-log\.test\.ts:\d+:\d+\)/);
});

test('redacts the secret from the logged stack too', async () => {
  const lines: string[] = [];
  const receiver = createReceiver({ secret: SECRET, logger: { error: (line) => lines.push(line) } });
  receiver.onJobCompleted(() => {
    throw new Error(`could not sign with ${SECRET}`);
  });
  await deliver(receiver);
  expect(lines.join('\n')).toContain('caused by Error: could not sign with');
  expect(lines.join('\n')).not.toContain(SECRET);
});

test('a thrown value with no stack logs its message alone, and a hostile one logs without a crash', async () => {
  const lines: string[] = [];
  const receiver = createReceiver({ secret: SECRET, logger: { error: (line) => lines.push(line) } });
  const hostile = new Error('boom');
  Object.defineProperty(hostile, 'stack', {
    get() {
      throw new Error('no stack for you');
    },
  });
  let call = 0;
  receiver.onJobCompleted(() => {
    call += 1;
    // eslint-disable-next-line @typescript-eslint/only-throw-error -- a thrown string is the case under test
    throw call === 1 ? 'a string' : hostile;
  });
  expect((await deliver(receiver)).status).toBe(500);
  expect((await deliver(receiver)).status).toBe(500);
  expect(lines).toHaveLength(2);
  expect(lines[0]).not.toContain('caused by');
  expect(lines[1]).toContain('boom');
});
