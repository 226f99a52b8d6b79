/**
 * One tracked task: submitted, its outcome not handled yet. Times are milliseconds since the
 * epoch, from the clock of whoever wrote them (the client that tracked it, the reconciler that
 * claimed it): instances keep their clocks in step (NTP), and leases are long beside any skew.
 */
export interface TrackedJob {
  readonly taskId: string;
  /** When the task was submitted (or first tracked). */
  readonly submittedAt: number;
  /** How many times it has been claimed for a poll, this claim included. */
  readonly polls: number;
  /** The tenant it was tracked for; absent when it was tracked without one. */
  readonly tenant?: string;
}

/** What {@link JobTracker.claimDue} is asked for. */
export interface ClaimDueRequest {
  /** A token unique to this claimant (one reconciler pass of one instance). */
  owner: string;
  /** At most this many tasks. */
  limit: number;
  /** A task never polled is due this long after its submission. */
  afterMs: number;
  /** The claimant's clock. */
  now: number;
}

/**
 * Where submitted tasks are remembered until their outcome is handled, so that a reconciler can
 * poll those whose webhook never came. The same contract for the in-memory, Redis and Postgres
 * trackers, and for one of your own:
 *
 * - `track(taskId, submittedAt?, tenant?)` remembers a task, for a tenant when one is given (a
 *   receiver whose `secret` is a function serves many tenants); tracking a task already tracked
 *   changes nothing, whatever the tenant.
 * - `claimDue` hands each due task to one claimant at a time: a task is due `afterMs` after its
 *   submission, then again at the time its last claimant gave with `release`. A claim is a lease
 *   of `leaseMs`: a claimant that died never keeps a task, since it is due again once the lease
 *   ends. Of concurrent claims, each task goes to at most one.
 * - `release(taskId, owner, nextPollAt)` hands the task back, to be due again at `nextPollAt`;
 *   only the claimant that holds it can (a claimant whose lease ended cannot move a task another
 *   one holds now).
 * - `settle(taskId, tenant?)` forgets the task: its outcome was handled (by a webhook or a poll),
 *   or it outlived `maxAgeMs` and was reported. With a tenant, only a task tracked for that same
 *   tenant is forgotten (another tenant's webhook carrying its id must not drop it); without one,
 *   the task is forgotten whatever its tenant.
 * - `pending()` lists what is tracked, oldest first (for `npx jobhook jobs`).
 *
 * `claimDue` and `pending` give each task's `tenant` when it has one.
 */
export interface JobTracker {
  /** How long a claim lives, in ms. */
  readonly leaseMs: number;
  /**
   * How long a task is tracked, in ms: a task still running at that age is reported by the
   * reconciler (never invented into an outcome) and forgotten.
   */
  readonly maxAgeMs: number;
  /** Remembers `taskId`, submitted at `submittedAt` (default: now), for `tenant` (default: none). */
  track(taskId: string, submittedAt?: number, tenant?: string): void | Promise<void>;
  /** Forgets `taskId`: with `tenant`, only when it was tracked for that tenant. */
  settle(taskId: string, tenant?: string): void | Promise<void>;
  /** Claims up to `limit` due tasks for `owner`. */
  claimDue(request: ClaimDueRequest): readonly TrackedJob[] | Promise<readonly TrackedJob[]>;
  /** Hands back `owner`'s claim of `taskId`, due again at `nextPollAt`. */
  release(taskId: string, owner: string, nextPollAt: number): void | Promise<void>;
  /** Tracked tasks, oldest first, at most `limit` (default 100). */
  pending(options?: { limit?: number }): readonly TrackedJob[] | Promise<readonly TrackedJob[]>;
}

/** The defaults every tracker shares. */
export const TRACKER_DEFAULTS = {
  leaseMs: 2 * 60 * 1000,
  maxAgeMs: 7 * 24 * 60 * 60 * 1000,
} as const;
