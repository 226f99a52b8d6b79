/**
 * A signal the simulator raises whenever something a watcher could show has changed (a webhook,
 * a job, a delivery or one of its attempts). It carries no data: a watcher reads the state again.
 * With no listener (the console is off) raising it costs a loop over an empty set.
 */
export function changeSignal() {
  const listeners = new Set<() => void>();
  return {
    notify(): void {
      for (const listener of listeners) listener();
    },
    /** Calls `listener` on every change until the returned function is called. */
    subscribe(listener: () => void): () => void {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
    get listeners(): number {
      return listeners.size;
    },
  };
}

export type ChangeSignal = ReturnType<typeof changeSignal>;
