import type { JobResult, KeptResult } from './job-result.js';

/** The results received lately, bounded in count and age: a ring, indexed by task id only when looked up. */
export function recentResults(options: { maxEntries: number; maxAgeMs: number; now: () => number }) {
  const { maxEntries, maxAgeMs, now } = options;
  let room = 0;
  let kept: (KeptResult | undefined)[] = [];
  let expiries = new Float64Array(0);
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
    // The unindexed are the newest: past them, the map may hold this one.
    if (unindexed > used) unindexed = used;
    else if (byTask.size > 0 && byTask.get(dropped.key) === dropped) byTask.delete(dropped.key);
  }

  function prune(at: number) {
    while (used > 0 && expiries[oldest]! <= at) dropOldest();
  }

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
