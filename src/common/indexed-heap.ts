/**
 * Where an item sits in an {@link IndexedHeap}: the heap writes it as the item moves, so that an
 * item can be removed or re-ordered where it is, without a search. An item in two heaps has two.
 */
export interface HeapSlot<T> {
  get(item: T): number;
  set(item: T, index: number): void;
}

/**
 * A binary min-heap of items that know their place in it: `peek` the first in O(1), `push`, `pop`,
 * `remove` any item and `update` one whose key changed in O(log n), and list the `first` k in
 * order in O(k log k), without taking them. No stale entries are left behind.
 */
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

  /** Takes `item`, which must be in this heap, out of it. */
  remove(item: T): void {
    const index = this.slot.get(item);
    this.slot.set(item, -1);
    const last = this.items.pop()!;
    if (index === this.items.length) return;
    // The last item fills the hole, then moves up or down to where its key belongs.
    this.items[index] = last;
    this.slot.set(last, index);
    this.update(last);
  }

  /** Restores the order after the key of `item`, which must be in this heap, changed. */
  update(item: T): void {
    const index = this.slot.get(item);
    if (index > 0 && this.before(item, this.items[(index - 1) >> 1]!)) this.up(index, item);
    else this.down(index, item);
  }

  /** The `count` first items, in order, left in place. */
  first(count: number): T[] {
    const { items, before } = this;
    const found: T[] = [];
    if (count <= 0 || items.length === 0) return found;
    // Best-first through the tree: the next item in order is the first of the children of those
    // already found (and the root), so a small heap of those candidates' indices is enough.
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
