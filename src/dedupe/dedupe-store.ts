/** What a claim found: `new` (run the handlers), `busy` (another holder's live claim: 409) or `done` (200). */
export type ClaimResult = 'new' | 'busy' | 'done';

/**
 * Where deliveries are claimed while their handlers run and remembered once handled, so that a
 * retried delivery runs them once. `claim` is atomic and a lease of `leaseMs` (a dead holder never
 * wedges a key); only the `owner` renews or releases; `complete` never overwrites another holder's
 * live claim. Retention must outlast the sender's retries (docs/design.md, "Delivery state").
 */
export interface DedupeStore {
  /** How long a claim lives without renewal, in milliseconds. */
  readonly leaseMs: number;
  /** Claims `key` for `owner` (a token unique to this attempt); see {@link ClaimResult}. */
  claim(key: string, owner: string): ClaimResult | Promise<ClaimResult>;
  /** Extends `owner`'s claim by `leaseMs`. `false`: `owner` no longer holds the key. */
  renew(key: string, owner: string): boolean | Promise<boolean>;
  /** The handlers succeeded: the key is `done` for the retention time. */
  complete(key: string, owner: string): void | Promise<void>;
  /** The handlers failed: frees the key if `owner` still holds it, so a retry runs them again. */
  release(key: string, owner: string): void | Promise<void>;
}
