/** A body's place in its receiver's time-out queue. */
export interface BodyDeadline {
  /** The body arrived (or failed) in time: it no longer expires. Idempotent. */
  cancel(): void;
}

interface Entry extends BodyDeadline {
  dueAt: number;
  expire: () => void;
  older: Entry | undefined;
  newer: Entry | undefined;
  queued: boolean;
}

/**
 * The body time-outs of one receiver, on one timer. Every body a receiver reads gets the same
 * time, so deadlines come due in the order the reads started: a queue linked through its entries,
 * due first at its head, and one setTimeout armed for the head. A setTimeout per body cost about
 * 1.5 µs per delivery in a node:http server's profile (a Timeout object, and Node's timer list
 * insert and removal), more than the rest of reading a 1 KB body.
 *
 * The timer is left armed when the queue empties (a small body is usually read within the turn
 * its request arrived, so arming and clearing per request would cost what it saves): it fires at
 * most once per time-out with nothing due, and then stops. It is unref'd, so it never keeps a
 * process alive by itself; a server's open connections do that while bodies are being read.
 */
export function bodyDeadlines(timeoutMs: number) {
  let oldest: Entry | undefined;
  let newest: Entry | undefined;
  let timer: ReturnType<typeof setTimeout> | undefined;

  function unlink(entry: Entry) {
    entry.queued = false;
    if (entry.older) entry.older.newer = entry.newer;
    else oldest = entry.newer;
    if (entry.newer) entry.newer.older = entry.older;
    else newest = entry.older;
    entry.older = entry.newer = undefined;
  }

  function arm(head: Entry) {
    // At least 1 ms: a clock that has not moved yet (Workers advance it only between events)
    // must not spin the timer.
    timer = setTimeout(fire, Math.max(1, head.dueAt - Date.now()));
    // A number on Workers and in browsers, where there is nothing to unref.
    (timer as { unref?: () => void }).unref?.();
  }

  function fire() {
    timer = undefined;
    const now = Date.now();
    while (oldest && oldest.dueAt <= now) {
      const due = oldest;
      unlink(due);
      due.expire();
    }
    if (oldest && timer === undefined) arm(oldest);
  }

  function cancel(this: Entry) {
    if (this.queued) unlink(this);
  }

  return {
    /** Calls `expire` once `timeoutMs` have passed, unless the returned deadline is cancelled first. */
    start(expire: () => void): BodyDeadline {
      const entry: Entry = {
        dueAt: Date.now() + timeoutMs,
        expire,
        older: newest,
        newer: undefined,
        queued: true,
        cancel,
      };
      if (newest) newest.newer = entry;
      else oldest = entry;
      newest = entry;
      if (timer === undefined) arm(entry);
      return entry;
    },
  };
}
