// The polling safety net's pacing, on a fake clock: each pause grows by half up to the ceiling,
// with ±10 % jitter, and a 429's Retry-After lengthens the next one. (Real-server tests in
// wait.test.ts cover what the polls find; pacing needs a clock the test controls.)
import { afterEach, beforeEach, describe, expect, test, vi } from 'vitest';
import { GatewayError } from '../../src/client/errors.js';
import type { ImageTask } from '../../src/client/types.js';
import { waitService } from '../../src/client/wait-for.js';
import { redactor } from '../../src/common/redaction.js';

beforeEach(() => void vi.useFakeTimers({ now: 1_000_000 }));
afterEach(() => void vi.useRealTimers());

/** A gateway whose task stays `processing`, noting when each poll came (ms since the wait began). */
function slowGateway(answers: (poll: number) => ImageTask | Error = () => processing) {
  const polls: number[] = [];
  const get = async () => {
    polls.push(Date.now() - 1_000_000);
    const answer = answers(polls.length);
    if (answer instanceof Error) throw answer;
    return answer;
  };
  return { polls, waitFor: waitService(get, redactor(['sk_test'])).waitFor };
}

const processing = { task_id: 't', status: 'processing' } as unknown as ImageTask;

/** Waits on the fake clock for `ms` with these intervals, then gives up; the pauses between polls. */
async function pausesOver(
  gateway: ReturnType<typeof slowGateway>,
  ms: number,
  intervals: { pollIntervalMs: number; maxPollIntervalMs: number },
): Promise<number[]> {
  const controller = new AbortController();
  gateway.waitFor('t', { ...intervals, signal: controller.signal }).catch(() => undefined);
  await vi.advanceTimersByTimeAsync(ms);
  controller.abort();
  return gaps(gateway.polls);
}

/** The pauses between consecutive polls. */
const gaps = (polls: number[]) => polls.slice(1).map((at, i) => at - polls[i]!);

describe('polling backoff', () => {
  test('polls at once, then after pauses that grow by half each time, up to maxPollIntervalMs', async () => {
    const gateway = slowGateway();
    const pauses = await pausesOver(gateway, 30_000, { pollIntervalMs: 1000, maxPollIntervalMs: 4000 });
    expect(gateway.polls[0]).toBe(0);
    const expected = [1000, 1500, 2250, 3375, 4000, 4000];
    const measured = pauses.slice(0, expected.length);
    measured.forEach((gap, i) => {
      expect(gap).toBeGreaterThanOrEqual(expected[i]! * 0.9 - 1);
      expect(gap).toBeLessThanOrEqual(expected[i]! * 1.1 + 1);
    });
    expect(Math.max(...pauses)).toBeLessThanOrEqual(4400 + 1);
  });

  test('jitter spreads the pauses, so that many waiters do not poll in step', async () => {
    const gateway = slowGateway();
    const pauses = await pausesOver(gateway, 20_000, { pollIntervalMs: 1000, maxPollIntervalMs: 1000 });
    expect(new Set(pauses).size).toBeGreaterThan(1);
  });

  test("a 429's Retry-After lengthens the next pause; a 500 keeps the usual one", async () => {
    const gateway = slowGateway((poll) =>
      poll === 2
        ? new GatewayError('busy', { status: 429, code: 'rate_limited', retryAfterSeconds: 20 })
        : poll === 4
          ? new GatewayError('down', { status: 500, code: 'internal_error' })
          : processing,
    );
    const pauses = await pausesOver(gateway, 40_000, { pollIntervalMs: 1000, maxPollIntervalMs: 60_000 });
    const [first, afterRateLimit, , afterError] = pauses;
    expect(first).toBeLessThanOrEqual(1100 + 1);
    expect(afterRateLimit).toBeGreaterThanOrEqual(20_000 * 0.9 - 1);
    expect(afterError).toBeLessThanOrEqual(1000 * 1.5 ** 3 * 1.1 + 1);
  });
});
