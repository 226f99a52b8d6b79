// setImmediate is Node's (and Bun's); the Web runtimes have only timers.
const later: (callback: () => void) => void =
  typeof setImmediate === 'function' ? setImmediate : (callback) => setTimeout(callback, 0);

/** Counts deliveries in progress so that `close()` can wait for them. */
export function inFlightTracker() {
  let count = 0;
  let closing = false;
  let drained: (() => void) | undefined;
  let whenDrained: Promise<void> | undefined;
  return {
    get closing() {
      return closing;
    },
    enter() {
      count++;
    },
    leave() {
      count--;
      if (closing && count === 0) drained?.();
    },
    close() {
      closing = true;
      // Resolved on a later turn of the event loop, not at once: the adapter writes the answer of
      // the last delivery after `receive` returns, and a caller that exits or drops connections
      // as soon as this resolves would otherwise cut that answer off, so the sender retries a
      // delivery that was handled.
      whenDrained ??= new Promise<void>((resolve) => {
        drained = () => later(resolve);
        if (count === 0) drained();
      });
      return whenDrained;
    },
  };
}
