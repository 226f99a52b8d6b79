import type { JobResult, KeptResult } from './job-result.js';

/**
 * The results received lately, bounded in count and age. Kept so that a waiter that starts after
 * its result arrived (the webhook beat `images.generate()`'s answer) still finds it.
 *
 * Every verified delivery adds one, and most receivers never look one up, so adding is kept to an
 * append: results sit in arrival order in a ring (the result and its expiry in two arrays; every
 * result is kept equally long, so arrival order is the order age and count drop them in), and the
 * map by task id is brought up to date only when a lookup comes. Indexing each result as it
 * arrived (a map insert of a new key, the delete of the oldest) was a visible share of `receive()`
 * (bench/NOTES.md). The ring replaced a list linked through the results, where dropping the oldest
 * wrote to it and its neighbour, objects 10,000 deliveries old; the ring reads and writes its
 * arrays in order. A lookup indexes what arrived since the last one, so the total work is the same
 * for an app that waits on every job, and none for one that never waits.
 *
 * A clock that steps back can make a result expire before an older one: it is then dropped late
 * (when it is the oldest), never early.
 */
export function recentResults(options: { maxEntries: number; maxAgeMs: number; now: () => number }) {
  const { maxEntries, maxAgeMs, now } = options;
  /** Slots of the ring, grown by doubling up to `maxEntries` so that a large bound costs nothing until used. */
  let room = 0;
  let kept: (KeptResult | undefined)[] = [];
  let expiries = new Float64Array(0);
  /** The oldest slot, and how many slots from it are in use. */
  let oldest = 0;
  let used = 0;
  /** Task id to its latest result, for the kept results older than the newest `unindexed`. */
  const byTask = new Map<string, KeptResult>();
  let unindexed = 0;

  function dropOldest() {
    const dropped = kept[oldest]!;
    kept[oldest] = undefined;
    oldest = oldest + 1 === room ? 0 : oldest + 1;
    used--;
    // The unindexed are the newest: past them, the map may hold this one (or a later result of
    // the same task, which stays).
    if (unindexed > used) unindexed = used;
    else if (byTask.size > 0 && byTask.get(dropped.key) === dropped) byTask.delete(dropped.key);
  }

  function prune(at: number) {
    while (used > 0 && expiries[oldest]! <= at) dropOldest();
  }

  /** Doubles the ring (up to `maxEntries`), its slots in order from 0. */
  function grow() {
    const larger = Math.min(maxEntries, Math.max(16, room * 2));
    const moved: (KeptResult | undefined)[] = new Array<KeptResult | undefined>(larger).fill(undefined);
    const movedExpiries = new Float64Array(larger);
    for (let n = 0; n < used; n++) {
      const from = (oldest + n) % room;
      moved[n] = kept[from];
      movedExpiries[n] = expiries[from]!;
    }
    room = larger;
    kept = moved;
    expiries = movedExpiries;
    oldest = 0;
  }

  return {
    /**
     * Keeps `result` (received at `at`): it is found by its task id until it is too old or
     * `maxEntries` newer ones came.
     */
    add(result: KeptResult, at: number = now()): void {
      prune(at);
      if (used === maxEntries) dropOldest();
      else if (used === room) grow();
      const slot = (oldest + used) % room;
      kept[slot] = result;
      expiries[slot] = at + maxAgeMs;
      used++;
      unindexed++;
    },
    /** The latest kept result under `key` (its task id within its tenant's space: `KeptResult.key`). */
    get(key: string): JobResult | undefined {
      const at = now();
      prune(at);
      for (let n = used - unindexed; n < used; n++) {
        const slot = (oldest + n) % room;
        byTask.set(kept[slot]!.key, kept[slot]!);
      }
      unindexed = 0;
      return byTask.get(key)?.result;
    },
  };
}
