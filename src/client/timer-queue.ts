import { withGetters } from '../common/with-getters.js';

/** Something a {@link timerQueue} wakes at a time. */
export interface Sleeper {
  wake(): void;
}

/** setTimeout's longest delay; a later wake-up is reached in steps. */
const MAX_DELAY_MS = 2 ** 31 - 1;

/**
 * Many wake-up times on one timer: a binary heap ordered by time, and one setTimeout armed for the
 * earliest. A thousand waiters cost one timer, not a thousand. Each sleeper has at most one live
 * wake-up; rescheduling or cancelling leaves the old heap entry behind as stale (its token no
 * longer matches) to be skipped when it surfaces. Once nothing is scheduled the heap is emptied
 * and the timer cleared, so an idle queue holds nothing.
 */
export function timerQueue(now: () => number = Date.now) {
  const heap: { at: number; token: number; sleeper: Sleeper }[] = [];
  const live = new Map<Sleeper, number>();
  let nextToken = 0;
  let timer: ReturnType<typeof setTimeout> | undefined;
  let timerAt = Infinity;

  function isStale(entry: { token: number; sleeper: Sleeper }) {
    return live.get(entry.sleeper) !== entry.token;
  }

  function arm() {
    while (heap.length > 0 && isStale(heap[0]!)) pop();
    if (live.size === 0) {
      heap.length = 0;
      disarm();
      return;
    }
    // Sleepers that reschedule often leave stale entries deep in the heap: keep it at most
    // twice the size of what is live.
    if (heap.length > 2 * live.size + 64) compact();
    const at = heap[0]!.at;
    if (timer !== undefined && timerAt <= at) return;
    disarm();
    timerAt = at;
    timer = setTimeout(fire, Math.min(MAX_DELAY_MS, Math.max(0, at - now())));
  }

  function disarm() {
    if (timer !== undefined) clearTimeout(timer);
    timer = undefined;
    timerAt = Infinity;
  }

  function fire() {
    timer = undefined;
    timerAt = Infinity;
    const due = now();
    const woken: Sleeper[] = [];
    while (heap.length > 0 && heap[0]!.at <= due) {
      const entry = pop();
      if (isStale(entry)) continue;
      live.delete(entry.sleeper);
      woken.push(entry.sleeper);
    }
    // Wake after the heap is consistent: a sleeper may schedule itself again from wake().
    for (const sleeper of woken) sleeper.wake();
    arm();
  }

  function compact() {
    const kept = heap.filter((entry) => !isStale(entry));
    heap.length = 0;
    for (const entry of kept) push(entry);
  }

  function push(entry: { at: number; token: number; sleeper: Sleeper }) {
    heap.push(entry);
    let index = heap.length - 1;
    while (index > 0) {
      const parent = (index - 1) >> 1;
      if (heap[parent]!.at <= entry.at) break;
      heap[index] = heap[parent]!;
      index = parent;
    }
    heap[index] = entry;
  }

  function pop() {
    const top = heap[0]!;
    const last = heap.pop()!;
    if (heap.length > 0) {
      let index = 0;
      for (;;) {
        const left = 2 * index + 1;
        if (left >= heap.length) break;
        const right = left + 1;
        const child = right < heap.length && heap[right]!.at < heap[left]!.at ? right : left;
        if (heap[child]!.at >= last.at) break;
        heap[index] = heap[child]!;
        index = child;
      }
      heap[index] = last;
    }
    return top;
  }

  const queue = {
    /** Wakes `sleeper` at `at` (ms, the queue's clock), replacing any wake-up it had. */
    schedule(sleeper: Sleeper, at: number): void {
      const token = ++nextToken;
      live.set(sleeper, token);
      push({ at, token, sleeper });
      arm();
    },
    /** Removes `sleeper`'s wake-up, if it has one. */
    cancel(sleeper: Sleeper): void {
      if (!live.delete(sleeper)) return;
      arm();
    },
  };
  /** `size`: sleepers with a wake-up (for diagnostics and leak tests). */
  return withGetters(queue, { size: () => live.size });
}
