import { describe, expect, it } from 'vitest';
import { BodyReading, onBodyAbort } from '../../src/wire/body.js';

function bodyLimits(maxBytes: number) {
  const limits = new BodyReading(maxBytes);
  return { limits, abort: () => BodyReading.abort(limits) };
}

// The receiver tells body readers of a time-out through a hook (jobhook's own readers) or through
// `signal`, made only when a reader reads it: both must hear of it, before or after it happened.
describe('BodyReading', () => {
  it('calls the stops registered through onBodyAbort once, on abort', () => {
    const { limits, abort } = bodyLimits(10);
    const calls: string[] = [];
    onBodyAbort(limits, () => calls.push('a'));
    const stopListening = onBodyAbort(limits, () => calls.push('b'));
    stopListening();
    abort();
    abort();
    expect(calls).toEqual(['a']);
    expect(limits.maxBytes).toBe(10);
  });

  it('shows a reader only maxBytes and signal', () => {
    const { limits } = bodyLimits(10);
    expect(Object.keys(limits)).toEqual(['maxBytes']);
    expect('signal' in limits).toBe(true);
    expect('abort' in limits).toBe(false);
  });

  it('calls a stop registered after the abort at once', () => {
    const { limits, abort } = bodyLimits(10);
    abort();
    let stopped = 0;
    onBodyAbort(limits, () => stopped++);
    expect(stopped).toBe(1);
  });

  it('aborts a signal read before the abort, and makes one read after it already aborted', () => {
    const before = bodyLimits(10);
    const signal = before.limits.signal;
    expect(signal.aborted).toBe(false);
    before.abort();
    expect(signal.aborted).toBe(true);

    const after = bodyLimits(10);
    after.abort();
    expect(after.limits.signal.aborted).toBe(true);
  });

  it('falls back to the signal for limits made elsewhere (a custom caller of a reader)', () => {
    const controller = new AbortController();
    let stopped = 0;
    onBodyAbort({ maxBytes: 1, signal: controller.signal }, () => stopped++);
    controller.abort();
    expect(stopped).toBe(1);
  });
});
