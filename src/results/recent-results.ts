import type { JobResult } from './job-result.js';

/**
 * The results received lately, bounded in count and age. Kept so that a waiter that starts after
 * its result arrived (the webhook beat `images.generate()`'s answer) still finds it.
 *
 * Every verified delivery adds one, and most receivers never look one up, so adding is kept to an
 * append: results sit in arrival order (the order age and count drop them in), and the map by task
 * id is brought up to date only when a lookup comes. Indexing each result as it arrived (a map insert of
 * a new key, the delete of the oldest) was a visible share of `receive()` (bench/NOTES.md). A lookup indexes what arrived since the last one, so the total work is the same for an app
 * that waits on every job, and none for one that never waits.
 */
export function recentResults(options: { maxEntries: number; maxAgeMs: number; now: () => number }) {
  const { maxEntries, maxAgeMs, now } = options;
  // Arrival order; `head` is the oldest kept, entries before it are dropped (cleared) until the
  // arrays are compacted.
  let results: (JobResult | undefined)[] = [];
  let storedAt: number[] = [];
  let head = 0;
  /** Task id to its latest result, for the results at positions below `indexed`. */
  const byTask = new Map<string, JobResult>();
  let indexed = 0;

  function prune(at: number) {
    while (
      head < results.length &&
      (results.length - head > maxEntries || at - storedAt[head]! >= maxAgeMs)
    ) {
      const dropped = results[head]!;
      // A later result of the same task may have taken its place in the map: keep that one.
      if (head < indexed && byTask.get(dropped.taskId) === dropped) byTask.delete(dropped.taskId);
      results[head] = undefined;
      head++;
    }
    if (indexed < head) indexed = head;
    // Compact once the dropped part is half the arrays: amortised O(1) per result.
    if (head > 0 && head * 2 >= results.length) {
      results = results.slice(head);
      storedAt = storedAt.slice(head);
      indexed -= head;
      head = 0;
    }
  }

  return {
    /** Keeps `result`: it is found by its task id until it is too old or `maxEntries` newer ones came. */
    add(result: JobResult): void {
      const at = now();
      results.push(result);
      storedAt.push(at);
      prune(at);
    },
    /** The latest kept result of `taskId`. */
    get(taskId: string): JobResult | undefined {
      prune(now());
      for (; indexed < results.length; indexed++) {
        const result = results[indexed]!;
        byTask.set(result.taskId, result);
      }
      return byTask.get(taskId);
    },
  };
}
