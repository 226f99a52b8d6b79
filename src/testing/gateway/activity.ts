/**
 * Counts the simulator's background work (automatic jobs, deliveries and their retries) so that a
 * test can await `gateway.settled()` instead of sleeping, and `close()` can cancel what is left.
 */
export function activityTracker() {
  let busy = 0;
  let waiters: (() => void)[] = [];
  const controllers = new Set<AbortController>();
  let closed = false;

  function release() {
    busy--;
    if (busy === 0) {
      const done = waiters;
      waiters = [];
      for (const resolve of done) resolve();
    }
  }

  /** An abort signal that fires when the simulator closes; `dispose` once it is no longer needed. */
  function closeSignal(): { signal: AbortSignal; dispose: () => void } {
    const controller = new AbortController();
    if (closed) controller.abort();
    else controllers.add(controller);
    return { signal: controller.signal, dispose: () => controllers.delete(controller) };
  }

  return {
    get closed() {
      return closed;
    },
    /** Runs `task` as tracked work; the simulator is settled only once it ends. */
    async track<T>(task: () => Promise<T>): Promise<T> {
      busy++;
      try {
        return await task();
      } finally {
        release();
      }
    },
    /** Resolves `true` after `ms`, or `false` at once when the simulator closes first. */
    wait(ms: number): Promise<boolean> {
      const { signal, dispose } = closeSignal();
      if (signal.aborted) return Promise.resolve(false);
      return new Promise((resolve) => {
        const timer = setTimeout(() => {
          dispose();
          resolve(true);
        }, ms);
        signal.addEventListener('abort', () => {
          clearTimeout(timer);
          resolve(false);
        });
      });
    },
    closeSignal,
    settled(): Promise<void> {
      return busy === 0 ? Promise.resolve() : new Promise((resolve) => waiters.push(resolve));
    },
    close() {
      closed = true;
      for (const controller of controllers) controller.abort();
      controllers.clear();
    },
  };
}

export type Activity = ReturnType<typeof activityTracker>;
