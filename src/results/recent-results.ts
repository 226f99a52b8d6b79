import { ExpiryList, type ExpiryLinks } from '../common/expiry-list.js';
import type { JobResult } from './job-result.js';

/** A result kept: the result itself stays as it is (waiters and the channel get it). */
interface Kept extends ExpiryLinks<Kept> {
  result: JobResult;
}

/**
 * The results received lately, bounded in count and age. Kept so that a waiter that starts after
 * its result arrived (the webhook beat `images.generate()`'s answer) still finds it.
 *
 * Every verified delivery adds one, and most receivers never look one up, so adding is kept to an
 * append: results sit in arrival order on an {@link ExpiryList} (every result is kept equally
 * long, so arrival order is the order age and count drop them in), and the map by task id is
 * brought up to date only when a lookup comes. Indexing each result as it arrived (a map insert of
 * a new key, the delete of the oldest) was a visible share of `receive()` (bench/NOTES.md). A
 * lookup indexes what arrived since the last one, so the total work is the same for an app that
 * waits on every job, and none for one that never waits.
 */
export function recentResults(options: { maxEntries: number; maxAgeMs: number; now: () => number }) {
  const { maxEntries, maxAgeMs, now } = options;
  const kept = new ExpiryList<Kept>();
  /** Task id to its latest result, for the kept results older than `unindexed`. */
  const byTask = new Map<string, JobResult>();
  /** The oldest kept result not in `byTask` yet (all newer ones are not either); `undefined`: none. */
  let unindexed: Kept | undefined;

  function prune(at: number) {
    for (let dropped = kept.shift(at, maxEntries); dropped; dropped = kept.shift(at, maxEntries)) {
      if (dropped === unindexed) {
        // The oldest is dropped first: everything left is newer, and none of it is indexed.
        unindexed = kept.oldest;
        continue;
      }
      // A later result of the same task may have taken its place in the map: keep that one.
      const { result } = dropped;
      if (byTask.get(result.taskId) === result) byTask.delete(result.taskId);
    }
  }

  return {
    /** Keeps `result`: it is found by its task id until it is too old or `maxEntries` newer ones came. */
    add(result: JobResult): void {
      const at = now();
      const entry: Kept = { result, expiresAt: 0, list: undefined, older: undefined, newer: undefined };
      kept.push(entry, at + maxAgeMs);
      unindexed ??= entry;
      prune(at);
    },
    /** The latest kept result of `taskId`. */
    get(taskId: string): JobResult | undefined {
      prune(now());
      for (let entry = unindexed; entry; entry = entry.newer) byTask.set(entry.result.taskId, entry.result);
      unindexed = undefined;
      return byTask.get(taskId);
    },
  };
}
