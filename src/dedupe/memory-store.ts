import { func, optionNames, positiveInteger, refuseUnknownOptions } from '../common/options.js';
import type { ClaimResult, DedupeStore } from './dedupe-store.js';

/** Options of {@link memoryDedupeStore}. */
export interface MemoryDedupeOptions {
  /**
   * Most handled keys remembered; past it the oldest handled ones are forgotten first. Claims in
   * flight are bounded by the same number on their own: past it a new claim answers `busy` (the
   * sender retries), so a flood of deliveries in flight never pushes out a handled key. Default
   * 10,000.
   */
  maxEntries?: number;
  /** How long a handled key is remembered, in milliseconds. Default 24 hours. */
  ttlMs?: number;
  /** How long a claim lives without renewal, in milliseconds. Default 30 seconds. */
  leaseMs?: number;
  /** Clock in milliseconds, for tests. */
  now?: () => number;
}

/** The in-memory store answers synchronously, and tells how many keys it holds. */
export interface MemoryDedupeStore extends DedupeStore {
  claim(key: string, owner: string): ClaimResult;
  renew(key: string, owner: string): boolean;
  complete(key: string, owner: string): void;
  release(key: string, owner: string): void;
  /** Keys held: handled ones and claims in flight. */
  readonly size: number;
}

interface Entry {
  key: string;
  /** The holder's token while claimed; `undefined` once handled. */
  owner: string | undefined;
  /** When the lease (claimed) or the retention (handled) ends. */
  expiresAt: number;
  list: List;
  /** Neighbours in expiry order. */
  older: Entry | undefined;
  newer: Entry | undefined;
}

/**
 * Entries in expiry order: a lease or a retention time is the same length for every entry, so
 * appending at `now + length` keeps the list sorted and expired entries are always at its head.
 */
interface List {
  oldest: Entry | undefined;
  newest: Entry | undefined;
  count: number;
}

const newList = (): List => ({ oldest: undefined, newest: undefined, count: 0 });

const MEMORY_DEDUPE_STORE_OPTIONS = optionNames<MemoryDedupeOptions>()([
  'maxEntries',
  'ttlMs',
  'leaseMs',
  'now',
]);

/**
 * The default store: one process's memory, bounded in size and age. Claims are leases, as the
 * {@link DedupeStore} contract says, so no key stays busy past `leaseMs` without renewal.
 */
export function memoryDedupeStore(options: MemoryDedupeOptions = {}): MemoryDedupeStore {
  refuseUnknownOptions(options, MEMORY_DEDUPE_STORE_OPTIONS, 'memoryDedupeStore');
  const where = 'memoryDedupeStore';
  const maxEntries = positiveInteger(where, 'maxEntries', options.maxEntries, 10_000);
  const ttlMs = positiveInteger(where, 'ttlMs', options.ttlMs, 24 * 60 * 60 * 1000, 'ms');
  const leaseMs = positiveInteger(where, 'leaseMs', options.leaseMs, 30_000, 'ms');
  const now = func(where, 'now', options.now) ?? Date.now;
  // Linked lists rather than iterating the Map from its start: each visit of a Map skips the holes
  // that deleting its head leaves behind, which made eviction slow on the hot path.
  const entries = new Map<string, Entry>();
  const claimed = newList();
  const handled = newList();

  function unlink(entry: Entry) {
    const list = entry.list;
    if (entry.older) entry.older.newer = entry.newer;
    else list.oldest = entry.newer;
    if (entry.newer) entry.newer.older = entry.older;
    else list.newest = entry.older;
    entry.older = entry.newer = undefined;
    list.count--;
  }

  function append(entry: Entry, list: List) {
    entry.list = list;
    entry.older = list.newest;
    if (list.newest) list.newest.newer = entry;
    else list.oldest = entry;
    list.newest = entry;
    list.count++;
  }

  function remove(entry: Entry) {
    entries.delete(entry.key);
    unlink(entry);
  }

  /** Drops expired entries from the head of `list`, and the oldest while it holds too many. */
  function trim(list: List, at: number, max: number) {
    for (let entry = list.oldest; entry && (entry.expiresAt <= at || list.count > max);) {
      const next = entry.newer;
      remove(entry);
      entry = next;
    }
  }

  /** The live entry of `key`: an expired one (a clock that went back, say) counts as absent. */
  function live(key: string, at: number): Entry | undefined {
    const entry = entries.get(key);
    if (entry && entry.expiresAt <= at) {
      remove(entry);
      return undefined;
    }
    return entry;
  }

  return {
    leaseMs,
    claim(key, owner) {
      const at = now();
      trim(claimed, at, Infinity);
      trim(handled, at, Infinity);
      const entry = live(key, at);
      if (entry) return entry.owner === undefined ? 'done' : 'busy';
      // Full of claims in flight: refuse rather than forget a handled key; the sender retries.
      if (claimed.count >= maxEntries) return 'busy';
      const fresh: Entry = {
        key,
        owner,
        expiresAt: at + leaseMs,
        list: claimed,
        older: undefined,
        newer: undefined,
      };
      entries.set(key, fresh);
      append(fresh, claimed);
      return 'new';
    },
    renew(key, owner) {
      const at = now();
      const entry = live(key, at);
      if (!entry || entry.owner !== owner) return false;
      unlink(entry);
      entry.expiresAt = at + leaseMs;
      append(entry, claimed);
      return true;
    },
    complete(key, owner) {
      const at = now();
      let entry = live(key, at);
      // Another holder's live claim is never overwritten; a handled key keeps its first time.
      if (entry && entry.owner !== owner) return;
      if (entry) {
        unlink(entry);
      } else {
        entry = { key, owner, expiresAt: 0, list: handled, older: undefined, newer: undefined };
        entries.set(key, entry);
      }
      entry.owner = undefined;
      entry.expiresAt = at + ttlMs;
      append(entry, handled);
      trim(handled, at, maxEntries);
    },
    release(key, owner) {
      const entry = entries.get(key);
      if (entry && entry.owner === owner) remove(entry);
    },
    get size() {
      return entries.size;
    },
  };
}
