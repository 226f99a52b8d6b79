/** `new`: claimed now, run the handlers. `busy`: another claim holds it. `done`: already handled. */
export type ClaimResult = 'new' | 'busy' | 'done';

/**
 * Remembers which delivery ids were handled, so that a retried delivery does not run handlers
 * twice. `claim` must be atomic: of two concurrent claims of one id, exactly one gets `new`.
 * Implement it over Redis or a database to share it between instances.
 */
export interface DedupeStore {
  /** Called before the handlers run for `id`; see {@link ClaimResult}. */
  claim(id: string): ClaimResult | Promise<ClaimResult>;
  /** The handlers succeeded: later claims of `id` get `done`. */
  complete(id: string): void | Promise<void>;
  /** The handlers failed: forget `id` so the sender's retry runs them again. */
  release(id: string): void | Promise<void>;
}

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
  /** Called before the handlers run for `id`; answers synchronously. */
  claim(id: string): ClaimResult;
  complete(id: string): void;
  release(id: string): void;
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
