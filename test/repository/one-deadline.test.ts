// Every "stop waiting after N ms" in jobhook's code is made by src/common/deadline.ts (or is an
// AbortSignal.timeout where a signal is what the caller wants), so that a time-out is cancelled,
// unref'd and reported one way. The files listed keep a timer of their own for something that is
// not a deadline.
import { describe, expect, it } from 'vitest';
import { codeLines } from './code-lines.js';

const OWN_TIMERS: readonly RegExp[] = [/\bsetTimeout\(/];
const NOT_DEADLINES = [
  'src/common/deadline.ts', // the deadlines themselves
  'src/common/backoff.ts', // the one sleep between retries
  'src/client/wait-for.ts', // wakes sleeping waits at their times, many on one timer
  'src/receiver/in-flight.ts', // setImmediate where the runtime lacks it
  'src/tools/simulator/console/live.ts', // gathers the console's state changes into one frame
];

describe('one deadline', () => {
  it('src and adapters make their time-outs with deadline(), deadlines() or within()', () => {
    expect(codeLines(['src', 'adapters'], OWN_TIMERS, { except: NOT_DEADLINES })).toEqual([]);
  });

  it('the check finds a timer of its own', () => {
    expect(codeLines(['src/client'], OWN_TIMERS)).toEqual([
      expect.stringMatching(/^src\/client\/wait-for\.ts:\d+: /),
    ]);
  });
});
