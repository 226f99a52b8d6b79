/**
 * At most `limit` polls in flight per client; the rest wait their turn in order, holding no
 * timer. A thousand waiters whose polls fall due together do not open a thousand connections.
 */
export function pollSlots(limit: number) {
  let running = 0;
  const queued = new Set<() => Promise<void>>();

  function next() {
    for (const start of queued) {
      if (running >= limit) return;
      queued.delete(start);
      running++;
      void start().finally(() => {
        running--;
        next();
      });
    }
  }

  return {
    /** Runs `start` when a slot is free; it must settle (never reject). Returns the cancel. */
    enqueue(start: () => Promise<void>): () => void {
      queued.add(start);
      next();
      return () => void queued.delete(start);
    },
  };
}
