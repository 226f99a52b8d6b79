import { IndexedHeap, withGetters } from '../common/structures.js';

/** Something a {@link timerQueue} wakes at a time. */
export interface Sleeper {
  wake(): void;
}

/** setTimeout's longest delay; a later wake-up is reached in steps. */
const MAX_DELAY_MS = 2 ** 31 - 1;

/** A sleeper's one wake-up, and its place in the queue's heap. */
interface WakeUp {
  sleeper: Sleeper;
  at: number;
  place: number;
}

/**
 * Many wake-up times on one timer: a heap ordered by time, and one setTimeout armed for the
 * earliest. A thousand waiters cost one timer, not a thousand. Each sleeper has at most one
 * wake-up, moved in place when it is rescheduled and taken out when it is cancelled, so the heap
 * holds only live wake-ups; once it is empty the timer is cleared, so an idle queue holds nothing.
 */
export function timerQueue(now: () => number = Date.now) {
  const heap = new IndexedHeap<WakeUp>((a, b) => a.at < b.at, {
    get: (wakeUp) => wakeUp.place,
    set: (wakeUp, place) => void (wakeUp.place = place),
  });
  const live = new Map<Sleeper, WakeUp>();
  let timer: ReturnType<typeof setTimeout> | undefined;
  let timerAt = Infinity;

  function arm() {
    const first = heap.peek();
    if (!first) return disarm();
    if (timer !== undefined && timerAt <= first.at) return;
    disarm();
    timerAt = first.at;
    timer = setTimeout(fire, Math.min(MAX_DELAY_MS, Math.max(0, first.at - now())));
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
    for (let first = heap.peek(); first && first.at <= due; first = heap.peek()) {
      heap.pop();
      live.delete(first.sleeper);
      woken.push(first.sleeper);
    }
    // Wake after the heap is consistent: a sleeper may schedule itself again from wake().
    for (const sleeper of woken) sleeper.wake();
    arm();
  }

  const queue = {
    /** Wakes `sleeper` at `at` (ms, the queue's clock), replacing any wake-up it had. */
    schedule(sleeper: Sleeper, at: number): void {
      const wakeUp = live.get(sleeper);
      if (wakeUp) {
        wakeUp.at = at;
        heap.update(wakeUp);
      } else {
        const added: WakeUp = { sleeper, at, place: -1 };
        live.set(sleeper, added);
        heap.push(added);
      }
      arm();
    },
    /** Removes `sleeper`'s wake-up, if it has one. */
    cancel(sleeper: Sleeper): void {
      const wakeUp = live.get(sleeper);
      if (!wakeUp) return;
      live.delete(sleeper);
      heap.remove(wakeUp);
      arm();
    },
  };
  /** `size`: sleepers with a wake-up (for diagnostics and leak tests). */
  return withGetters(queue, { size: () => live.size });
}
