// Issue 23.5: body time-outs run on the monotonic clock. A wall clock stepped back (NTP, a VM
// resumed) must neither disable the 408 of a body that never arrives nor hold up those behind it;
// the signed timestamp is still judged by the wall clock.
import { createReceiver } from 'jobhook';
import type { BodyReader } from 'jobhook/extend';
import { signDelivery } from 'jobhook/testing';
import { afterEach, describe, expect, test, vi } from 'vitest';
import { completed, SECRET } from '../adapters/fixtures.js';

const BODY_TIMEOUT_MS = 200;
/** Far past the time-out: a 408 that has not come by then was not coming on time. */
const LATE_MS = 5_000;

/** A reader whose body never arrives. */
const never: BodyReader = () => new Promise(() => {});

/** The answer's status, or 'late' when none came within LATE_MS of real time. */
function statusWithin(answer: Promise<{ status: number }>): Promise<number | 'late'> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const late = new Promise<'late'>((resolve) => (timer = setTimeout(resolve, LATE_MS, 'late')));
  return Promise.race([answer.then((a) => a.status), late]).finally(() => clearTimeout(timer));
}

describe('a wall clock stepped back 60 s', () => {
  afterEach(() => void vi.useRealTimers());

  test('body time-outs still answer 408 on time, the first and the ones behind it', async () => {
    // Only Date is faked: timers and performance.now() run as they do.
    vi.useFakeTimers({ toFake: ['Date'] });
    vi.setSystemTime(Date.now());
    const receiver = createReceiver({ secret: SECRET, bodyTimeoutMs: BODY_TIMEOUT_MS });
    const { headers } = signDelivery({ secret: SECRET, payload: completed() });
    const first = receiver.receive({ headers, body: never });
    vi.setSystemTime(Date.now() - 60_000);
    const second = receiver.receive({
      headers: signDelivery({ secret: SECRET, payload: completed() }).headers,
      body: never,
    });
    expect(await Promise.all([statusWithin(first), statusWithin(second)])).toEqual([408, 408]);
  });

  test('the signed timestamp is still judged by the wall clock', async () => {
    vi.useFakeTimers({ toFake: ['Date'] });
    const receiver = createReceiver({ secret: SECRET, logger: { error: () => undefined } });
    const delivery = signDelivery({ secret: SECRET, payload: completed() });
    vi.setSystemTime(Date.now() - 600_000);
    const answer = await receiver.receive({ headers: delivery.headers, body: delivery.body });
    expect(answer.status).toBe(401);
    expect(answer.body).toContain('timestamp');
  });
});
