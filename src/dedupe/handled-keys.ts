/** The memory store's handled keys: a ring in arrival order, and a hash table rebuilt once half stale. */
export class HandledKeys {
  readonly #maxEntries: number;
  #room = 0;
  #keys: (string | undefined)[] = [];
  #hashes = new Int32Array(0);
  #expiries = new Float64Array(0);
  #oldest = 0;
  #used = 0;
  #dropped = 0;
  /** Linear probing: slot `i` holds the hash at `[2i]` and the ring slot plus one (0: empty) at `[2i + 1]`. */
  #table = new Int32Array(0);
  #mask = 0;
  #linked = 0;
  #rebuildAt = 0;
  /** Fixed per store at its first key, so that keys chosen to collide cannot be prepared in advance. */
  #seed: number | undefined;
  #lastKey: string | undefined;
  #lastHash = 0;

  constructor(maxEntries: number) {
    this.#maxEntries = maxEntries;
  }

  get size(): number {
    return this.#used - this.#dropped;
  }

  has(key: string, at: number): boolean {
    if (this.#used === 0) return false;
    const hash = this.#hash(key);
    const table = this.#table;
    const mask = this.#mask;
    for (let i = hash & mask; ; i = (i + 1) & mask) {
      const slot = table[2 * i + 1]! - 1;
      if (slot < 0) return false;
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

  prune(at: number): void {
    while (this.#used > 0 && this.#expiries[this.#oldest]! <= at) this.#forgetOldest();
  }

  #forgetOldest(): void {
    const slot = this.#oldest;
    if (this.#keys[slot] === undefined) this.#dropped--;
    else this.#keys[slot] = undefined;
    this.#oldest = slot + 1 === this.#room ? 0 : slot + 1;
    this.#used--;
  }

  #link(hash: number, slot: number): void {
    const table = this.#table;
    const mask = this.#mask;
    let i = hash & mask;
    while (table[2 * i + 1] !== 0) i = (i + 1) & mask;
    table[2 * i] = hash;
    table[2 * i + 1] = slot + 1;
    this.#linked++;
  }

  /** Links the keys held again in a table of three times the ring, rebuilt once half of it is used. */
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

  #grow(): void {
    const room = Math.min(this.#maxEntries, Math.max(16, this.#room * 2));
    const keys: (string | undefined)[] = new Array<string | undefined>(room).fill(undefined);
    const hashes = new Int32Array(room);
    const expiries = new Float64Array(room);
    let used = 0;
    for (let n = 0; n < this.#used; n++) {
      const from = (this.#oldest + n) % this.#room;
      const key = this.#keys[from];
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
