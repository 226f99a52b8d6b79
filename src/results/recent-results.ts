import type { JobResult } from './job-result.js';

interface Entry {
  result: JobResult;
  storedAt: number;
  older: Entry | undefined;
  newer: Entry | undefined;
}

/**
 * The results received lately, by task id, bounded in count and age. Kept so that a waiter that
 * starts after its result arrived (the webhook beat `images.generate()`'s answer) still finds it.
 *
 * Entries are also linked oldest to newest, so the oldest are dropped from the head of that list,
 * on each write and read, and no timer is needed. Not by iterating the Map from its start: each
 * such visit skips the holes that deleting its head leaves behind, which cost several µs per
 * delivery once the Map was full.
 */
export function recentResults(options: { maxEntries: number; maxAgeMs: number; now: () => number }) {
  const { maxEntries, maxAgeMs, now } = options;
  const byTask = new Map<string, Entry>();
  let oldest: Entry | undefined;
  let newest: Entry | undefined;

  function unlink(entry: Entry) {
    if (entry.older) entry.older.newer = entry.newer;
    else oldest = entry.newer;
    if (entry.newer) entry.newer.older = entry.older;
    else newest = entry.older;
  }

  function prune(at: number) {
    while (oldest && (byTask.size > maxEntries || at - oldest.storedAt >= maxAgeMs)) {
      byTask.delete(oldest.result.taskId);
      unlink(oldest);
    }
  }

  return {
    /** Stores `result`, moving a task that is already there to the newest end. */
    add(result: JobResult): void {
      const at = now();
      const previous = byTask.get(result.taskId);
      if (previous) unlink(previous);
      const entry: Entry = { result, storedAt: at, older: newest, newer: undefined };
      if (newest) newest.newer = entry;
      else oldest = entry;
      newest = entry;
      byTask.set(result.taskId, entry);
      prune(at);
    },
    get(taskId: string): JobResult | undefined {
      prune(now());
      return byTask.get(taskId)?.result;
    },
    get size(): number {
      return byTask.size;
    },
  };
}
