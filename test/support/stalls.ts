// Real-time steps on a busy machine. A test of a lease or a retention kept by a store in its own
// time (Redis, PostgreSQL, SQLite) needs two calls to come within the lease of each other; on a
// loaded machine a timer or a connection can wait longer than that, which proves nothing either
// way. Such a round is run again, and only rounds whose timed steps kept to the limit are asserted.

/** A round in which a step that had to come within its limit came later. */
export class Stalled extends Error {}

/**
 * Taken just before a call that starts a lease or a retention of `limitMs`: `within()`, called
 * just after a later call returned, throws {@link Stalled} when the two may have been that far
 * apart in the store's time.
 */
export function sinceNow(limitMs: number): { within(): void } {
  const start = performance.now();
  return {
    within() {
      if (performance.now() - start >= limitMs) throw new Stalled();
    },
  };
}

/** Runs `round` again while it stalled, ten times at most. */
export async function rounds(round: () => Promise<void>): Promise<void> {
  for (let tries = 1; tries <= 10; tries++) {
    try {
      return await round();
    } catch (error) {
      if (!(error instanceof Stalled)) throw error;
    }
  }
  throw new Error('Ten rounds in a row stalled past their limit: the machine is too busy for this test.');
}
