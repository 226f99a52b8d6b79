import { TIMED_OUT, within } from '../common/deadline.js';
import { ignore } from '../common/logging.js';
import { withGetters } from '../common/structures.js';

// setImmediate is Node's (and Bun's); the Web runtimes have only timers.
const later: (callback: () => void) => void =
  typeof setImmediate === 'function' ? setImmediate : (callback) => setTimeout(callback, 0);

/**
 * Counts deliveries in progress, and work that outlives their answers (a handler past its timeout,
 * an `onError` call), so that `close()` can wait for both, within a bound.
 */
export function inFlightTracker() {
  let count = 0;
  let closing = false;
  const background = new Set<Promise<unknown>>();
  let drained: (() => void) | undefined;
  let whenDrained: Promise<void> | undefined;
  const check = () => {
    if (closing && count === 0 && background.size === 0) drained?.();
  };
  const tracker = {
    enter() {
      count++;
    },
    leave() {
      count--;
      check();
    },
    /** Work that goes on after an answer: `close()` waits for it too. Never rejects. */
    track(work: Promise<unknown>) {
      const tracked = work.then(ignore, ignore);
      background.add(tracked);
      void tracked.then(() => {
        background.delete(tracked);
        check();
      });
    },
    /**
     * Resolves once everything in progress finished (`true`), or after `timeoutMs` (`false`).
     */
    close(timeoutMs: number): Promise<boolean> {
      closing = true;
      // Resolved on a later turn of the event loop, not at once: the adapter writes the answer of
      // the last delivery after `receive` returns, and a caller that exits or drops connections
      // as soon as this resolves would otherwise cut that answer off, so the sender retries a
      // delivery that was handled.
      whenDrained ??= new Promise<void>((resolve) => {
        drained = () => later(resolve);
        check();
      });
      return within(whenDrained, timeoutMs).then((drained) => drained !== TIMED_OUT);
    },
  };
  return withGetters(tracker, {
    closing: () => closing,
    /** Deliveries being received plus work still running after its answer. */
    pending: () => count + background.size,
  });
}

/** What {@link inFlightTracker} returns. */
export type InFlight = ReturnType<typeof inFlightTracker>;
