/**
 * The handled keys of the memory dedupe store: at most `maxEntries`, each until it expires, the
 * oldest forgotten first.
 *
 * A ring of slots in the order keys were added (key, hash, expiry in parallel arrays) and an
 * open-addressing table from hash to slot. Every delivery of a full store looks up a key never
 * seen, adds it and forgets the oldest: with a Map of entry objects linked in expiry order (what
 * this replaced) those were three hash-table operations, the last a delete whose holes the Map
 * compacts by copying itself, and writes to objects 10,000 deliveries old (bench/NOTES.md). Here a
 * lookup reads one line of one typed array (and compares a key only when its 32-bit hash
 * matches), adding writes to that same line, and forgetting the oldest does not touch the table
 * at all: its entry stays, pointing at a slot that now holds another key (or none), and is never
 * taken for a match since a match compares the key in the slot. Those stale entries are cleared by
 * rebuilding the table from the ring once it is half full, in one pass, at most once per
 * `maxEntries / 2` keys added.
 *
 * Keys are added in time order with the same retention, so the ring is also in expiry order and
 * pruning looks at its oldest slot only. A clock that steps back can break that order: an expired
 * key that is not the oldest is then dropped when a lookup finds it (its slot stays in the ring,
 * empty, until its turn comes), so an expired key is never reported.
 */
export class HandledKeys {
  readonly #maxEntries: number;
  /** Slots of the ring, grown by doubling up to `maxEntries` so that a large bound costs nothing until used. */
  #room = 0;
  #keys: (string | undefined)[] = [];
  #hashes = new Int32Array(0);
  #expiries = new Float64Array(0);
  /** The oldest slot, and how many slots from it are in use (live keys plus dropped ones). */
  #oldest = 0;
  #used = 0;
  /** Slots in use whose key was dropped by a lookup (expired out of order). */
  #dropped = 0;
  /**
   * Open addressing by linear probing: for table slot `i`, `[2i]` is the key's hash and `[2i + 1]`
   * its ring slot plus one (0: empty). Both in one array so that a probe reads one cache line.
   */
  #table = new Int32Array(0);
  #mask = 0;
  /** Entries written since the last rebuild (live and stale), and how many call for the next. */
  #linked = 0;
  #rebuildAt = 0;
  /** Fixed per store at its first key, so that keys chosen to collide cannot be prepared in advance. */
  #seed: number | undefined;
  /** The last key hashed: `claim` then `complete` of one delivery hash it once. */
  #lastKey: string | undefined;
  #lastHash = 0;

  constructor(maxEntries: number) {
    this.#maxEntries = maxEntries;
  }

  /** Live keys held. */
  get size(): number {
    return this.#used - this.#dropped;
  }

  /** Whether `key` is held and has not expired at `at`. */
  has(key: string, at: number): boolean {
    if (this.#used === 0) return false;
    const hash = this.#hash(key);
    const table = this.#table;
    const mask = this.#mask;
    for (let i = hash & mask; ; i = (i + 1) & mask) {
      const slot = table[2 * i + 1]! - 1;
      if (slot < 0) return false;
      // A stale entry's slot holds another key, or none, or this same key added again (then it
      // is this key's entry as much as the newer one is).
      if (table[2 * i] !== hash || this.#keys[slot] !== key) continue;
      if (this.#expiries[slot]! > at) return true;
      this.#keys[slot] = undefined;
      this.#dropped++;
      return false;
    }
  }

  /** Adds `key`, which must not be held, until `expiresAt`; forgets the oldest key when full. */
  add(key: string, expiresAt: number): void {
    if (this.#used === this.#maxEntries) this.#forgetOldest();
    else if (this.#used === this.#room) this.#grow();
    if (this.#linked >= this.#rebuildAt) this.#rebuild();
    const hash = this.#hash(key);
    const slot = (this.#oldest + this.#used) % this.#room;
    this.#keys[slot] = key;
    this.#hashes[slot] = hash;
    this.#expiries[slot] = expiresAt;
    this.#used++;
    this.#link(hash, slot);
  }

  /** Forgets the keys expired at `at`, oldest first, stopping at the first live one. */
  prune(at: number): void {
    while (this.#used > 0 && this.#expiries[this.#oldest]! <= at) this.#forgetOldest();
  }

  /** Empties the oldest slot; its table entry goes stale (see the class comment). */
  #forgetOldest(): void {
    const slot = this.#oldest;
    if (this.#keys[slot] === undefined) this.#dropped--;
    else this.#keys[slot] = undefined;
    this.#oldest = slot + 1 === this.#room ? 0 : slot + 1;
    this.#used--;
  }

  /** Puts ring slot `slot` in the first free table slot from its hash's. */
  #link(hash: number, slot: number): void {
    const table = this.#table;
    const mask = this.#mask;
    let i = hash & mask;
    while (table[2 * i + 1] !== 0) i = (i + 1) & mask;
    table[2 * i] = hash;
    table[2 * i + 1] = slot + 1;
    this.#linked++;
  }

  /**
   * Clears the table and links the keys held again. The table has room for three times the ring,
   * and is rebuilt once half of it is used, so at least half a ring of keys is added between two
   * rebuilds, and a probe for a key never seen ends within a few entries.
   */
  #rebuild(): void {
    let size = 8;
    while (size < this.#room * 3) size *= 2;
    if (this.#table.length === size * 2) this.#table.fill(0);
    else this.#table = new Int32Array(size * 2);
    this.#mask = size - 1;
    this.#rebuildAt = size / 2;
    this.#linked = 0;
    for (let n = 0; n < this.#used; n++) {
      const slot = (this.#oldest + n) % this.#room;
      if (this.#keys[slot] !== undefined) this.#link(this.#hashes[slot]!, slot);
    }
  }

  /** Doubles the ring (up to `maxEntries`), its slots in order from 0, and rebuilds the table. */
  #grow(): void {
    const room = Math.min(this.#maxEntries, Math.max(16, this.#room * 2));
    const keys: (string | undefined)[] = new Array<string | undefined>(room).fill(undefined);
    const hashes = new Int32Array(room);
    const expiries = new Float64Array(room);
    let used = 0;
    for (let n = 0; n < this.#used; n++) {
      const from = (this.#oldest + n) % this.#room;
      const key = this.#keys[from];
      // Slots whose key was dropped are left out: the ring stays in time order without them.
      if (key === undefined) continue;
      keys[used] = key;
      hashes[used] = this.#hashes[from]!;
      expiries[used] = this.#expiries[from]!;
      used++;
    }
    this.#room = room;
    this.#keys = keys;
    this.#hashes = hashes;
    this.#expiries = expiries;
    this.#oldest = 0;
    this.#used = used;
    this.#dropped = 0;
    this.#rebuild();
  }

  /** FNV-1a over the UTF-16 code units, seeded, then mixed so that the low bits (the table slot) vary. */
  #hash(key: string): number {
    if (key === this.#lastKey) return this.#lastHash;
    this.#seed ??= (Math.random() * 0x1_0000_0000) | 0;
    let hash = this.#seed ^ 0x811c9dc5;
    for (let i = 0; i < key.length; i++) hash = Math.imul(hash ^ key.charCodeAt(i), 0x01000193);
    hash = Math.imul(hash ^ (hash >>> 16), 0x85ebca6b);
    hash = Math.imul(hash ^ (hash >>> 13), 0xc2b2ae35);
    hash ^= hash >>> 16;
    this.#lastKey = key;
    this.#lastHash = hash;
    return hash;
  }
}
