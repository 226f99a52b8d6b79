// A handler slower than handlerTimeoutMs (issue 44, item 3): the time-out names the ways out, and
// when the handler that outlived it settles, the log says whether it succeeded and what that means
// for the sender's retries. The handlers wait on promises the test resolves: no timing is asserted.
import { describe, expect, test, vi } from 'vitest';
import { createReceiver, type JobhookError } from 'jobhook';
import { signDelivery } from 'jobhook/testing';
import { completedPayload, deferred, SECRET } from '../fixtures.js';

/** A receiver with a short time-out whose one handler waits for `gate`, and what it logged. */
function slowReceiver(handler: (signal: AbortSignal) => Promise<void>) {
  const logger = { error: vi.fn<(line: string) => void>(), warn: vi.fn<(line: string) => void>() };
  const receiver = createReceiver({ secret: SECRET, handlerTimeoutMs: 50, logger });
  receiver.onJobCompleted((_event, context) => handler(context.signal));
  const delivery = signDelivery({ secret: SECRET, payload: completedPayload() });
  const send = () => receiver.receive({ headers: delivery.headers, body: delivery.body });
  const settled = () =>
    vi.waitFor(
      () => {
        const line = logger.warn.mock.calls.map(([text]) => text).find((text) => /outlived/.test(text));
        if (line === undefined) throw new Error('no line about the late handler yet');
        return line;
      },
      { timeout: 30_000, interval: 10 },
    );
  return { receiver, logger, send, settled };
}

describe('a handler slower than handlerTimeoutMs', () => {
  test('the time-out names a hand-off, the inbox, handlerTimeoutMs and context.signal', async () => {
    const gate = deferred();
    const { receiver, logger, send, settled } = slowReceiver(() => gate.promise);
    expect((await send()).status).toBe(500);
    const [timeout] = logger.error.mock.calls.map(([line]) => line);
    expect(timeout).toMatch(/did not finish within 50 ms \(handlerTimeoutMs\)/);
    expect(timeout).toMatch(/hand the event off \(createReceiver\(\{ handoff \}\)/);
    expect(timeout).toMatch(/inbox/);
    expect(timeout).toMatch(/raise handlerTimeoutMs/);
    expect(timeout).toMatch(/stop on context\.signal/);
    expect((await send()).status).toBe(409); // it still runs
    gate.resolve();
    await settled();
    await receiver.close();
  });

  test('finishing later is logged as a success, and the next retry is a duplicate', async () => {
    const gate = deferred();
    const { receiver, send, settled } = slowReceiver(() => gate.promise);
    expect((await send()).status).toBe(500);
    gate.resolve();
    expect(await settled()).toMatch(
      /the job\.completed handlers that outlived their time-out finished and succeeded: the event is handled, and a retry of it is answered 200 as a duplicate\.$/,
    );
    const again = await send();
    expect(again.status).toBe(200);
    expect(JSON.parse(again.body)).toEqual({ ok: true, duplicate: true });
    await receiver.close();
  });

  test('failing later is logged as not handled, and the next retry runs it again', async () => {
    const gate = deferred();
    let runs = 0;
    const { receiver, logger, send, settled } = slowReceiver(async () => {
      runs++;
      if (runs > 1) return;
      await gate.promise;
      throw new Error('the upload failed');
    });
    expect((await send()).status).toBe(500);
    gate.resolve();
    expect(await settled()).toMatch(/finished, and one failed \(reported\): the event is not handled/);
    expect(logger.error.mock.calls.some(([line]) => line.includes('the upload failed'))).toBe(true);
    expect((await send()).status).toBe(200);
    expect(runs).toBe(2);
    await receiver.close();
  });

  test('a handler that stops on context.signal is said to have stopped', async () => {
    const { receiver, send, settled } = slowReceiver(
      (signal) =>
        new Promise<void>((_resolve, reject) => {
          signal.addEventListener('abort', () => reject(signal.reason as JobhookError), { once: true });
        }),
    );
    expect((await send()).status).toBe(500);
    expect(await settled()).toMatch(/stopped on context\.signal: the event is not handled/);
    await receiver.close();
  });
});
