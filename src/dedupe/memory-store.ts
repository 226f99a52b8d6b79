import type { ClaimResult, DedupeStore } from './dedupe-store.js';

export type { ClaimResult, DedupeStore };

/** Options of {@link memoryDedupeStore}. */
export interface MemoryDedupeOptions {
  /** Most ids remembered; the oldest handled ones are forgotten first. Default 10,000. */
  maxEntries?: number;
  /** How long a handled id is remembered, in milliseconds. Default 24 hours. */
  ttlMs?: number;
  /** Clock in milliseconds, for tests. */
  now?: () => number;
}

/** The in-memory store answers synchronously, and tells how many ids it holds. */
export interface MemoryDedupeStore extends DedupeStore {
  // The owner is ignored for now: one process's memory has a single holder per id (see the lease
  // contract in dedupe-store.ts; the lease-aware version replaces this one).
  /** Called before the handlers run for `id`; answers synchronously. */
  claim(id: string, owner?: string): ClaimResult;
  renew(id: string, owner?: string): boolean;
  complete(id: string, owner?: string): void;
  release(id: string, owner?: string): void;
  readonly size: number;
}

interface Entry {
  id: string;
  done: boolean;
  at: number;
  /** Neighbours in age order (the list `oldest` … `newest`). */
  older: Entry | undefined;
  newer: Entry | undefined;
}

/** The default store: one process's memory, bounded in size and age. */
export function memoryDedupeStore(options: MemoryDedupeOptions = {}): MemoryDedupeStore {
  const maxEntries = options.maxEntries ?? 10_000;
  const ttlMs = options.ttlMs ?? 24 * 60 * 60 * 1000;
  const now = options.now ?? Date.now;
  // Ids are kept in age order in a linked list (a completed id moves to the newest end), so
  // eviction looks only at the oldest entries. Iterating the Map itself from its start would also
  // give that order, but each visit skips the holes that deleting its head leaves behind.
  const entries = new Map<string, Entry>();
  let oldest: Entry | undefined;
  let newest: Entry | undefined;

  const expired = (entry: Entry, at: number) => entry.done && at - entry.at >= ttlMs;

  function unlink(entry: Entry) {
    if (entry.older) entry.older.newer = entry.newer;
    else oldest = entry.newer;
    if (entry.newer) entry.newer.older = entry.older;
    else newest = entry.older;
    entry.older = entry.newer = undefined;
  }

  /** Makes `id` the newest entry, with these fields. */
  function put(id: string, done: boolean, at: number) {
    let entry = entries.get(id);
    if (entry) {
      unlink(entry);
      entry.done = done;
      entry.at = at;
    } else {
      entry = { id, done, at, older: undefined, newer: undefined };
      entries.set(id, entry);
    }
    entry.older = newest;
    if (newest) newest.newer = entry;
    else oldest = entry;
    newest = entry;
  }

  function remove(entry: Entry) {
    entries.delete(entry.id);
    unlink(entry);
  }

  function evict(at: number) {
    for (let entry = oldest; entry;) {
      const next = entry.newer;
      if (entries.size <= maxEntries && !expired(entry, at)) return;
      if (entry.done) remove(entry);
      else if (entries.size <= maxEntries) return;
      entry = next;
    }
  }

  return {
    // No lease yet: an id in flight stays busy until its holder completes or releases it.
    leaseMs: Number.POSITIVE_INFINITY,
    renew(id) {
      const entry = entries.get(id);
      return entry !== undefined && !entry.done;
    },
    claim(id) {
      const at = now();
      const entry = entries.get(id);
      if (entry && !expired(entry, at)) return entry.done ? 'done' : 'busy';
      put(id, false, at);
      evict(at);
      return 'new';
    },
    complete(id) {
      put(id, true, now());
    },
    release(id) {
      const entry = entries.get(id);
      if (entry) remove(entry);
    },
    get size() {
      return entries.size;
    },
  };
}
