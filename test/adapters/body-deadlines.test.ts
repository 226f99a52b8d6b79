import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { deadlines as bodyDeadlines } from '../../src/common/deadline.js';

// One timer for all of a receiver's body time-outs: each body still expires on its own time, and
// an idle receiver holds no timer.
describe('bodyDeadlines', () => {
  beforeEach(() => void vi.useFakeTimers());
  afterEach(() => void vi.useRealTimers());

  it('expires each body on its own time, in order, on a single timer', () => {
    const deadlines = bodyDeadlines(100);
    const expired: string[] = [];
    deadlines.start(() => expired.push('a'));
    vi.advanceTimersByTime(30);
    deadlines.start(() => expired.push('b'));
    vi.advanceTimersByTime(30);
    deadlines.start(() => expired.push('c'));
    expect(vi.getTimerCount()).toBe(1);
    vi.advanceTimersByTime(39);
    expect(expired).toEqual([]);
    vi.advanceTimersByTime(1);
    expect(expired).toEqual(['a']);
    vi.advanceTimersByTime(30);
    expect(expired).toEqual(['a', 'b']);
    vi.advanceTimersByTime(30);
    expect(expired).toEqual(['a', 'b', 'c']);
    expect(vi.getTimerCount()).toBe(0);
  });

  it('never expires a cancelled body; with none left its timer fires once and stops', () => {
    const deadlines = bodyDeadlines(100);
    const expired: string[] = [];
    const a = deadlines.start(() => expired.push('a'));
    vi.advanceTimersByTime(50);
    deadlines.start(() => expired.push('b'));
    a.cancel();
    a.cancel();
    // The timer armed for `a` fires and finds `b` not due yet: it waits for `b` instead.
    vi.advanceTimersByTime(60);
    expect(expired).toEqual([]);
    vi.advanceTimersByTime(40);
    expect(expired).toEqual(['b']);
    expect(vi.getTimerCount()).toBe(0);

    // Bodies read within the turn they started arm the timer once, not once each.
    for (let i = 0; i < 5; i++) deadlines.start(() => expired.push('c')).cancel();
    expect(vi.getTimerCount()).toBe(1);
    vi.advanceTimersByTime(1000);
    expect(expired).toEqual(['b']);
    expect(vi.getTimerCount()).toBe(0);
  });
});

describe('bodyDeadlines on the real clock', () => {
  it('never keeps the process alive by itself', () => {
    const timers = () => process.getActiveResourcesInfo().filter((type) => type === 'Timeout').length;
    const before = timers();
    bodyDeadlines(60_000).start(() => {});
    expect(timers()).toBe(before);
  });
});
