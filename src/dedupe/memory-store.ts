import { func, optionNames, positiveInteger, refuseUnknownOptions } from '../common/option-checks.js';
import { ExpiryList, type ExpiryLinks, withGetters } from '../common/structures.js';
import type { ClaimResult, DedupeStore } from './dedupe-store.js';
import { HandledKeys } from './handled-keys.js';

/** Options of {@link memoryDedupeStore}. */
export interface MemoryDedupeOptions {
  /** Most handled keys kept (claims in flight bounded apart, so a flood never pushes one out). Default 10,000. */
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

interface Claimed extends ExpiryLinks<Claimed> {
  key: string;
  owner: string;
}

const MEMORY_DEDUPE_STORE_OPTIONS = optionNames<MemoryDedupeOptions>()([
  'maxEntries',
  'ttlMs',
  'leaseMs',
  'now',
]);

/** The default store: one process's memory, bounded in size and age, its claims leases as the contract says. */
export function memoryDedupeStore(options: MemoryDedupeOptions = {}): MemoryDedupeStore {
  refuseUnknownOptions(options, MEMORY_DEDUPE_STORE_OPTIONS, 'memoryDedupeStore');
  const where = 'memoryDedupeStore';
  const maxEntries = positiveInteger(where, 'maxEntries', options.maxEntries, 10_000);
  const ttlMs = positiveInteger(where, 'ttlMs', options.ttlMs, 24 * 60 * 60 * 1000, 'ms');
  const leaseMs = positiveInteger(where, 'leaseMs', options.leaseMs, 30_000, 'ms');
  const now = func(where, 'now', options.now) ?? Date.now;
  // Claims in flight: usually one at a time, in `sole`; the others in a Map and a list in lease order.
  let sole: Claimed | undefined;
  const claims = new Map<string, Claimed>();
  const claimed = new ExpiryList<Claimed>();
  const handled = new HandledKeys(maxEntries);
  // The claim completed or released last, reused by the next.
  let spare: Claimed | undefined;

  function drop(entry: Claimed) {
    if (entry === sole) {
      sole = undefined;
    } else {
      claimed.remove(entry);
      claims.delete(entry.key);
    }
    spare = entry;
  }

  function claimHeld(key: string): Claimed | undefined {
    if (sole !== undefined && sole.key === key) return sole;
    return claims.size === 0 ? undefined : claims.get(key);
  }

  /** The live claim of `key`: an expired one (a clock that went back, say) counts as absent. */
  function claimOf(key: string, at: number): Claimed | undefined {
    const entry = claimHeld(key);
    if (entry && entry.expiresAt <= at) {
      drop(entry);
      return undefined;
    }
    return entry;
  }

  const store: Omit<MemoryDedupeStore, 'size'> = {
    leaseMs,
    claim(key, owner) {
      const at = now();
      if (sole !== undefined && sole.expiresAt <= at) drop(sole);
      for (let entry = claimed.shift(at); entry; entry = claimed.shift(at)) {
        claims.delete(entry.key);
        spare = entry;
      }
      handled.prune(at);
      if (claimOf(key, at)) return 'busy';
      if (handled.has(key, at)) return 'done';
      if (claimed.size + (sole === undefined ? 0 : 1) >= maxEntries) return 'busy';
      let entry = spare;
      if (entry === undefined) {
        entry = { key, owner, expiresAt: 0, list: undefined, older: undefined, newer: undefined };
      } else {
        spare = undefined;
        entry.key = key;
        entry.owner = owner;
      }
      if (sole === undefined) {
        entry.expiresAt = at + leaseMs;
        sole = entry;
      } else {
        claims.set(key, entry);
        claimed.push(entry, at + leaseMs);
      }
      return 'new';
    },
    renew(key, owner) {
      const at = now();
      const entry = claimOf(key, at);
      if (!entry || entry.owner !== owner) return false;
      if (entry === sole) {
        entry.expiresAt = at + leaseMs;
      } else {
        claimed.remove(entry);
        claimed.push(entry, at + leaseMs);
      }
      return true;
    },
    complete(key, owner) {
      const at = now();
      const entry = claimOf(key, at);
      if (entry) {
        if (entry.owner !== owner) return;
        drop(entry);
      } else if (handled.has(key, at)) {
        return;
      }
      handled.prune(at);
      handled.add(key, at + ttlMs);
    },
    release(key, owner) {
      const entry = claimHeld(key);
      if (entry && entry.owner === owner) drop(entry);
    },
  };
  return withGetters(store, { size: () => (sole === undefined ? 0 : 1) + claims.size + handled.size });
}
