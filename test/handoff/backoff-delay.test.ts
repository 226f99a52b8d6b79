import { describe, expect, it } from 'vitest';
import { backoffDelay, sleep } from '../../src/common/backoff.js';

describe('backoffDelay', () => {
  it('grows by the factor from the first delay and stops at the cap', () => {
    const delays = [1, 2, 3, 4, 5, 6].map((retry) => backoffDelay({ firstMs: 100, maxMs: 1_000 }, retry));
    expect(delays).toEqual([100, 200, 400, 800, 1_000, 1_000]);
    expect(backoffDelay({ firstMs: 100, maxMs: 10_000, factor: 3 }, 3)).toBe(900);
  });

  it('stays finite however many retries a loop has made', () => {
    expect(backoffDelay({ firstMs: 50, maxMs: 2_000 }, 1_000_000)).toBe(2_000);
    expect(
      backoffDelay({ firstMs: 50, maxMs: 2_000, jitter: 'full' }, Number.MAX_SAFE_INTEGER, () => 0.5),
    ).toBe(1_000);
  });

  it('full jitter spreads the wait between 0 and the delay', () => {
    const backoff = { firstMs: 100, maxMs: 1_000, jitter: 'full' as const };
    expect(backoffDelay(backoff, 3, () => 0)).toBe(0);
    expect(backoffDelay(backoff, 3, () => 0.999)).toBe(400);
  });

  it('a fractional jitter moves the delay by at most that fraction, never past the cap', () => {
    const backoff = { firstMs: 1_000, maxMs: 1_050, jitter: 0.1 };
    expect(backoffDelay(backoff, 1, () => 0)).toBe(900);
    expect(backoffDelay(backoff, 1, () => 1)).toBe(1_050);
  });
});

describe('sleep', () => {
  it('rejects with the reason as soon as its signal aborts', async () => {
    const controller = new AbortController();
    const slept = sleep(60_000, controller.signal);
    controller.abort(new Error('stop'));
    await expect(slept).rejects.toThrow('stop');
    await expect(sleep(60_000, controller.signal)).rejects.toThrow('stop');
  });

  it('resolves after the wait', async () => {
    await expect(sleep(1)).resolves.toBeUndefined();
  });
});
