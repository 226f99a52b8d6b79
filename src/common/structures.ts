/** The links an entry of an {@link ExpiryList} carries itself, so that keeping it allocates nothing. */
export interface ExpiryLinks<E extends ExpiryLinks<E>> {
  expiresAt: number;
  list: ExpiryList<E> | undefined;
  older: E | undefined;
  newer: E | undefined;
}

/** Entries of one lifetime in expiry order, linked through themselves; a clock stepping back expires them late. */
export class ExpiryList<E extends ExpiryLinks<E>> {
  oldest: E | undefined = undefined;
  newest: E | undefined = undefined;
  size = 0;

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

  remove(entry: E): void {
    if (entry.older) entry.older.newer = entry.newer;
    else this.oldest = entry.newer;
    if (entry.newer) entry.newer.older = entry.older;
    else this.newest = entry.older;
    entry.older = entry.newer = undefined;
    entry.list = undefined;
    this.size--;
  }

  /** Takes off and gives the oldest entry if it expired at `at` or the list holds over `max`; call in a loop. */
  shift(at: number, max = Infinity): E | undefined {
    const oldest = this.oldest;
    if (oldest === undefined || (oldest.expiresAt > at && this.size <= max)) return undefined;
    this.remove(oldest);
    return oldest;
  }
}

/** Where an item sits in an {@link IndexedHeap}, written by the heap so it can be removed without a search. */
export interface HeapSlot<T> {
  get(item: T): number;
  set(item: T, index: number): void;
}

/** A binary min-heap of items that know their place in it: any item can be removed or re-ordered in O(log n). */
export class IndexedHeap<T> {
  private readonly items: T[] = [];
  private readonly before: (a: T, b: T) => boolean;
  private readonly slot: HeapSlot<T>;

  /** `before(a, b)`: `a` comes first (a strict order: false for equals, which come out in any order). */
  constructor(before: (a: T, b: T) => boolean, slot: HeapSlot<T>) {
    this.before = before;
    this.slot = slot;
  }

  get size(): number {
    return this.items.length;
  }

  peek(): T | undefined {
    return this.items[0];
  }

  push(item: T): void {
    this.items.push(item);
    this.up(this.items.length - 1, item);
  }

  pop(): T | undefined {
    const top = this.items[0];
    if (top !== undefined) this.remove(top);
    return top;
  }

  remove(item: T): void {
    const index = this.slot.get(item);
    this.slot.set(item, -1);
    const last = this.items.pop()!;
    if (index === this.items.length) return;
    this.items[index] = last;
    this.slot.set(last, index);
    this.update(last);
  }

  update(item: T): void {
    const index = this.slot.get(item);
    if (index > 0 && this.before(item, this.items[(index - 1) >> 1]!)) this.up(index, item);
    else this.down(index, item);
  }

  first(count: number): T[] {
    const { items, before } = this;
    const found: T[] = [];
    if (count <= 0 || items.length === 0) return found;
    // Best-first through the tree: the next in order is among the children of those found.
    const candidates = new IndexedHeap<number>((a, b) => before(items[a]!, items[b]!), NO_SLOT);
    candidates.push(0);
    while (found.length < count && candidates.size > 0) {
      const index = candidates.pop()!;
      found.push(items[index]!);
      for (const child of [2 * index + 1, 2 * index + 2]) if (child < items.length) candidates.push(child);
    }
    return found;
  }

  private up(index: number, item: T): void {
    const { items, before, slot } = this;
    while (index > 0) {
      const parent = (index - 1) >> 1;
      if (!before(item, items[parent]!)) break;
      items[index] = items[parent]!;
      slot.set(items[index]!, index);
      index = parent;
    }
    items[index] = item;
    slot.set(item, index);
  }

  private down(index: number, item: T): void {
    const { items, before, slot } = this;
    for (;;) {
      const left = 2 * index + 1;
      if (left >= items.length) break;
      const right = left + 1;
      const child = right < items.length && before(items[right]!, items[left]!) ? right : left;
      if (!before(items[child]!, item)) break;
      items[index] = items[child]!;
      slot.set(items[index]!, index);
      index = child;
    }
    items[index] = item;
    slot.set(item, index);
  }
}

/** For a heap whose items are never removed nor updated in place (only pushed and popped). */
const NO_SLOT: HeapSlot<number> = { get: () => 0, set: () => undefined };

/** `object` with getters defined after it was made: V8 makes a literal holding a getter a slow dictionary. */
export function withGetters<T extends object, G extends Record<string, unknown>>(
  object: T,
  getters: { readonly [K in keyof G]: () => G[K] },
): T & { readonly [K in keyof G]: G[K] } {
  for (const name of Object.keys(getters) as (keyof G & string)[]) {
    Object.defineProperty(object, name, { get: getters[name], enumerable: true });
  }
  return object as T & { readonly [K in keyof G]: G[K] };
}
