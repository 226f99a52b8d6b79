import { ExpiryList } from '../common/expiry-list.js';
import type { JobResult, KeptResult } from './job-result.js';

/**
 * The results received lately, bounded in count and age. Kept so that a waiter that starts after
 * its result arrived (the webhook beat `images.generate()`'s answer) still finds it.
 *
 * Every verified delivery adds one, and most receivers never look one up, so adding is kept to an
 * append: results (each a {@link KeptResult}, its own list entry) sit in arrival order on an
 * {@link ExpiryList} (every result is kept equally
 * long, so arrival order is the order age and count drop them in), and the map by task id is
 * brought up to date only when a lookup comes. Indexing each result as it arrived (a map insert of
 * a new key, the delete of the oldest) was a visible share of `receive()` (bench/NOTES.md). A
 * lookup indexes what arrived since the last one, so the total work is the same for an app that
 * waits on every job, and none for one that never waits.
 */
export function recentResults(options: { maxEntries: number; maxAgeMs: number; now: () => number }) {
  const { maxEntries, maxAgeMs, now } = options;
  const kept = new ExpiryList<KeptResult>();
  /** Task id to its latest result, for the kept results older than `unindexed`. */
  const byTask = new Map<string, KeptResult>();
  /** The oldest kept result not in `byTask` yet (all newer ones are not either); `undefined`: none. */
  let unindexed: KeptResult | undefined;

  function prune(at: number) {
    for (let dropped = kept.shift(at, maxEntries); dropped; dropped = kept.shift(at, maxEntries)) {
      if (dropped === unindexed) {
        // The oldest is dropped first: everything left is newer, and none of it is indexed.
        unindexed = kept.oldest;
        continue;
      }
      // A later result of the same task may have taken its place in the map: keep that one.
      if (byTask.get(dropped.taskId) === dropped) byTask.delete(dropped.taskId);
    }
  }

  return {
    /** Keeps `result`: it is found by its task id until it is too old or `maxEntries` newer ones came. */
    add(result: KeptResult): void {
      const at = now();
      kept.push(result, at + maxAgeMs);
      unindexed ??= result;
      prune(at);
    },
    /** The latest kept result of `taskId`. */
    get(taskId: string): JobResult | undefined {
      prune(now());
      for (let entry = unindexed; entry; entry = entry.newer) byTask.set(entry.taskId, entry);
      unindexed = undefined;
      return byTask.get(taskId)?.result;
    },
  };
}
