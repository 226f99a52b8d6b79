import { func, optionNames, positiveInteger, refuseUnknownOptions } from '../common/options.js';
import { ExpiryList, type ExpiryLinks } from '../common/expiry-list.js';
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

/** A key held: claimed (on the `claimed` list) or handled (on the `handled` list). */
interface Entry extends ExpiryLinks<Entry> {
  key: string;
  /** The holder's token while claimed; `undefined` once handled. */
  owner: string | undefined;
}

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
  // A lease or a retention time is the same length for every entry of its list, so each list is
  // in expiry order (see ExpiryList) and pruning looks at its head only.
  const entries = new Map<string, Entry>();
  const claimed = new ExpiryList<Entry>();
  const handled = new ExpiryList<Entry>();
  // Once full, every delivery's complete drops the oldest handled key; the next claim takes its
  // entry over rather than allocating one that lives as long (each kept object is one more for the
  // garbage collector to copy and promote).
  let spare: Entry | undefined;
  // The claim made last: a complete of it (handlers that returned no promise, the common case)
  // finds it without a second Map lookup.
  let latest: Entry | undefined;

  function forget(entry: Entry) {
    entries.delete(entry.key);
    if (latest === entry) latest = undefined;
    spare = entry;
  }

  function remove(entry: Entry) {
    entry.list!.remove(entry);
    forget(entry);
  }

  /** Drops expired entries from the head of `list`, and the oldest while it holds too many. */
  function trim(list: ExpiryList<Entry>, at: number, max: number) {
    for (let entry = list.shift(at, max); entry; entry = list.shift(at, max)) forget(entry);
  }

  function entryFor(key: string, owner: string): Entry {
    const entry = spare;
    if (entry === undefined) {
      return { key, owner, expiresAt: 0, list: undefined, older: undefined, newer: undefined };
    }
    spare = undefined;
    entry.key = key;
    entry.owner = owner;
    return entry;
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
      if (claimed.size >= maxEntries) return 'busy';
      const fresh = entryFor(key, owner);
      entries.set(key, fresh);
      claimed.push(fresh, at + leaseMs);
      latest = fresh;
      return 'new';
    },
    renew(key, owner) {
      const at = now();
      const entry = live(key, at);
      if (!entry || entry.owner !== owner) return false;
      claimed.remove(entry);
      claimed.push(entry, at + leaseMs);
      return true;
    },
    complete(key, owner) {
      const at = now();
      let entry =
        latest !== undefined && latest.key === key && latest.list === claimed && latest.expiresAt > at
          ? latest
          : live(key, at);
      // Another holder's live claim is never overwritten; a handled key keeps its first time.
      if (entry && entry.owner !== owner) return;
      if (entry) {
        claimed.remove(entry);
      } else {
        entry = entryFor(key, owner);
        entries.set(key, entry);
      }
      entry.owner = undefined;
      handled.push(entry, at + ttlMs);
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
