/** The links an entry of an {@link ExpiryList} carries itself, so that keeping it allocates nothing more. */
export interface ExpiryLinks<E extends ExpiryLinks<E>> {
  /** When it expires, on the clock of the list's user: it has expired once that clock reaches it. */
  expiresAt: number;
  /** The list it is on; `undefined` once it is off (removed, or taken as expired). */
  list: ExpiryList<E> | undefined;
  /** Neighbours in expiry order. */
  older: E | undefined;
  newer: E | undefined;
}

/**
 * Entries in the order they expire, oldest first: the expiry queue of the dedupe memory store's
 * claims in flight and of the body deadlines. Each gives every entry the same lifetime (a lease, a
 * time-out), so appending at `now + lifetime` keeps the list sorted and what has expired is always
 * at its head: pruning looks at the head only, and dropping the oldest when there are too many is
 * the same step.
 *
 * A linked list through the entries rather than an array or a Map's order: an entry can leave
 * from the middle (a claim renewed, released or completed) in constant time, and nothing is
 * allocated or copied per entry (iterating a Map from its start skips the holes that deleting
 * its head leaves behind, which made eviction slow on the hot path: bench/NOTES.md).
 *
 * A clock that steps back can make an entry expire before an older one: it is then dropped late
 * (when it reaches the head), never early, so callers that must not see an expired entry check
 * `expiresAt` where they look it up.
 */
export class ExpiryList<E extends ExpiryLinks<E>> {
  oldest: E | undefined = undefined;
  newest: E | undefined = undefined;
  /** Entries on the list. */
  size = 0;

  /** Appends `entry` (not on any list) as the newest, expiring at `expiresAt`. */
  push(entry: E, expiresAt: number): void {
    entry.expiresAt = expiresAt;
    entry.list = this;
    entry.older = this.newest;
    entry.newer = undefined;
    if (this.newest) this.newest.newer = entry;
    else this.oldest = entry;
    this.newest = entry;
    this.size++;
  }

  /** Takes `entry`, which must be on this list, off it. */
  remove(entry: E): void {
    if (entry.older) entry.older.newer = entry.newer;
    else this.oldest = entry.newer;
    if (entry.newer) entry.newer.older = entry.older;
    else this.newest = entry.older;
    entry.older = entry.newer = undefined;
    entry.list = undefined;
    this.size--;
  }

  /**
   * Takes the oldest entry off the list and gives it, if it has expired at `at` or the list holds
   * more than `max` entries; else `undefined`. Call it in a loop to prune.
   */
  shift(at: number, max = Infinity): E | undefined {
    const oldest = this.oldest;
    if (oldest === undefined || (oldest.expiresAt > at && this.size <= max)) return undefined;
    this.remove(oldest);
    return oldest;
  }
}
