import type { JobResult } from './job-result.js';

/**
 * The results received lately, by task id, bounded in count and age. Kept so that a waiter that
 * starts after its result arrived (the webhook beat `images.generate()`'s answer) still finds it.
 *
 * A Map keeps insertion order, so the oldest entries are at its head: they are dropped there, on
 * each write and read, and no timer is needed.
 */
export function recentResults(options: { maxEntries: number; maxAgeMs: number; now: () => number }) {
  const { maxEntries, maxAgeMs, now } = options;
  const byTask = new Map<string, { result: JobResult; storedAt: number }>();

  function prune(at: number) {
    for (const [taskId, { storedAt }] of byTask) {
      if (byTask.size <= maxEntries && at - storedAt < maxAgeMs) break;
      byTask.delete(taskId);
    }
  }

  return {
    /** Stores `result`, moving a task that is already there to the newest end. */
    add(result: JobResult): void {
      const at = now();
      byTask.delete(result.taskId);
      byTask.set(result.taskId, { result, storedAt: at });
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
