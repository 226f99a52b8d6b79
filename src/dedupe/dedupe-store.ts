/**
 * What a claim found. `new`: the caller now holds the key (run the handlers). `busy`: a live
 * claim of another holder holds it (answer 409, the sender retries). `done`: handled within the
 * retention time (answer 200 without running anything).
 */
export type ClaimResult = 'new' | 'busy' | 'done';

/**
 * Where deliveries are claimed while their handlers run and remembered once handled, so that a
 * retried or duplicated delivery runs its handlers once. The same contract for the in-memory,
 * Redis and Postgres stores, and for one of your own:
 *
 * - `claim(key, owner)` is atomic: of concurrent claims of one key, exactly one gets `new`. A
 *   claim is a lease of `leaseMs`: a holder that died (crash, `kill -9`) never wedges a key, since
 *   its claim expires and the next claim gets `new`.
 * - The holder calls `renew` while its handlers run (jobhook renews every quarter of the lease, so one failed renewal still leaves time), then either
 *   `complete` (the key is `done` for the store's retention time) or `release` (the key is free,
 *   so the sender's retry runs the handlers again).
 * - Only the holder can renew or release: each call names the `owner` token of its claim, and the
 *   store compares it atomically, so a holder whose lease expired cannot free a key another
 *   holder has claimed since. `complete` marks the key done when `owner` holds it or nobody does
 *   (the handlers did succeed); it never overwrites another holder's live claim.
 *
 * Retention must outlast the sender's retry window: past it a redelivered event runs again.
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
