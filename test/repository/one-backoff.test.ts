// The hand-off engines wait and back off through src/common/backoff.ts only: no timer of their
// own (setTimeout, node:timers/promises) and no doubling written out (`2 **`, `* 2`), so that
// every retry loop's pauses come from one formula and one sleep. The pauses themselves are those
// the engines had before they shared it (test/handoff/backoffs.test.ts).
import { describe, expect, it } from 'vitest';
import { codeLines, withoutComments } from './code-lines.js';

const FOLDERS = ['src/bullmq', 'src/pg-boss', 'src/nats', 'src/handoff'];
const OWN_WAITS: readonly RegExp[] = [/\bsetTimeout\(/, /timers\/promises/, /\*\*/, /\*\s*2\b/];

describe('one back-off', () => {
  it('the hand-off engines take their pauses from backoffDelay and wait with sleep', () => {
    expect(codeLines(FOLDERS, OWN_WAITS)).toEqual([]);
  });

  it('the check finds a sleep or a doubling of its own', () => {
    expect(withoutComments('await new Promise((r) => setTimeout(r, 5)); // setTimeout(')).toMatch(
      OWN_WAITS[0]!,
    );
    expect(
      OWN_WAITS.some((pattern) => pattern.test(withoutComments('/** 2 ** 3 */ const url = "a://b";'))),
    ).toBe(false);
    expect(OWN_WAITS.some((pattern) => pattern.test('pause = Math.min(pause * 2, 1000);'))).toBe(true);
  });
});
