// Every retry loop in src waits and backs off through src/common/backoff.ts only: no timer of its
// own (setTimeout, node:timers/promises) and no growth written out (`2 **`, `* 2`, `* 1.5`), so
// that every loop's pauses come from one formula and one sleep. The pauses of the hand-off engines
// are those they had before they shared it (test/handoff/backoffs.test.ts). The files listed below
// keep a timer, a power or a doubling for something that is not a pause between retries.
import { describe, expect, it } from 'vitest';
import { codeLines, withoutComments } from './code-lines.js';

const OWN_WAITS: readonly RegExp[] = [/\bsetTimeout\(/, /timers\/promises/, /\*\*/, /\*\s*(2|1\.\d+)\b/];
const NOT_BACKOFFS = [
  'src/common/backoff.ts', // the formula and the sleep themselves
  'src/common/deadline.ts', // time-outs (test/repository/one-deadline.test.ts)
  'src/client/wait-for.ts', // one timer for many waits, whose pauses come from backoffDelay
  'src/receiver/in-flight.ts', // setImmediate where the runtime lacks it
  'src/tools/simulator/console/live.ts', // gathers the console's state changes into one frame
  'src/dedupe/handled-keys.ts', // a hash table that doubles as it grows
  'src/results/recent-results.ts', // a ring that doubles as it grows
];

describe('one back-off', () => {
  it('every loop in src takes its pauses from backoffDelay and waits with sleep', () => {
    expect(codeLines(['src'], OWN_WAITS, { except: NOT_BACKOFFS })).toEqual([]);
  });

  it('the check finds a sleep or a doubling of its own', () => {
    expect(withoutComments('await new Promise((r) => setTimeout(r, 5)); // setTimeout(')).toMatch(
      OWN_WAITS[0]!,
    );
    expect(
      OWN_WAITS.some((pattern) => pattern.test(withoutComments('/** 2 ** 3 */ const url = "a://b";'))),
    ).toBe(false);
    expect(OWN_WAITS.some((pattern) => pattern.test('pause = Math.min(pause * 2, 1000);'))).toBe(true);
    expect(OWN_WAITS.some((pattern) => pattern.test('waitMs = Math.min(waitMs * 1.5, 2000);'))).toBe(true);
  });
});
