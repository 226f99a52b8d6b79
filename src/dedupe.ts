/** `new`: claimed now, run the handlers. `busy`: another claim holds it. `done`: already handled. */
export type ClaimResult = 'new' | 'busy' | 'done';

/**
 * Remembers which delivery ids were handled, so that a retried delivery does not run handlers
 * twice. `claim` must be atomic: of two concurrent claims of one id, exactly one gets `new`.
 * Implement it over Redis or a database to share it between instances.
 */
export interface DedupeStore {
  claim(id: string): ClaimResult | Promise<ClaimResult>;
  /** The handlers succeeded: later claims of `id` get `done`. */
  complete(id: string): void | Promise<void>;
  /** The handlers failed: forget `id` so the sender's retry runs them again. */
  release(id: string): void | Promise<void>;
}

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
  claim(id: string): ClaimResult;
  complete(id: string): void;
  release(id: string): void;
  readonly size: number;
}

interface Entry {
  done: boolean;
  at: number;
}

/** The default store: one process's memory, bounded in size and age. */
export function memoryDedupeStore(options: MemoryDedupeOptions = {}): MemoryDedupeStore {
  const maxEntries = options.maxEntries ?? 10_000;
  const ttlMs = options.ttlMs ?? 24 * 60 * 60 * 1000;
  const now = options.now ?? Date.now;
  // A Map iterates in insertion order; entries are re-inserted when completed, so the
  // first entries are the oldest and eviction looks only at the head.
  const entries = new Map<string, Entry>();

  const expired = (entry: Entry, at: number) => entry.done && at - entry.at >= ttlMs;

  function evict(at: number) {
    for (const [id, entry] of entries) {
      if (entries.size <= maxEntries && !expired(entry, at)) return;
      if (entry.done) entries.delete(id);
      else if (entries.size <= maxEntries) return;
    }
  }

  return {
    claim(id) {
      const at = now();
      const entry = entries.get(id);
      if (entry && !expired(entry, at)) return entry.done ? 'done' : 'busy';
      entries.delete(id);
      entries.set(id, { done: false, at });
      evict(at);
      return 'new';
    },
    complete(id) {
      entries.delete(id);
      entries.set(id, { done: true, at: now() });
    },
    release(id) {
      entries.delete(id);
    },
    get size() {
      return entries.size;
    },
  };
}
