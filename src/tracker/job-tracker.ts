import { JobhookError } from '../common/errors.js';
import { positiveInteger } from '../common/option-checks.js';

/** One tracked task, its outcome not handled yet; times are ms since the epoch on the writer's clock. */
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
  limit: number;
  /** A task never polled is due this long after its submission. */
  afterMs: number;
  now: number;
}

/** Where submitted tasks wait for their outcome; each claimed by one at a time (docs/reconciliation.md). */
export interface JobTracker {
  /** How long a claim lives, in ms. */
  readonly leaseMs: number;
  /** How long a task is tracked, in ms: one still running at that age is reported and forgotten. */
  readonly maxAgeMs: number;
  /** Remembers `taskId`, submitted at `submittedAt` (default: now), for `tenant` (default: none). */
  track(taskId: string, submittedAt?: number, tenant?: string): void | Promise<void>;
  /** Forgets `taskId`: with `tenant`, only when it was tracked for that tenant. */
  settle(taskId: string, tenant?: string): void | Promise<void>;
  /**
   * Whether `taskId` is tracked (with `tenant`, for that tenant): a confirming receiver asks the
   * gateway only about tasks its own clients submitted. Optional for trackers of your own.
   */
  has?(taskId: string, tenant?: string): boolean | Promise<boolean>;
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

/** The options every tracker takes. */
export interface TrackerTimes {
  /** How long a claim to poll a task lives, in ms. Default 120,000. */
  leaseMs?: number;
  /** How long a task is tracked, in ms. Default 7 days. */
  maxAgeMs?: number;
}

/** What a `jobs` option must be, in the message that refuses anything else. */
export const JOB_TRACKER =
  'a job tracker: memoryJobTracker(), redisJobTracker(...) or postgresJobTracker(...)';

/** Checks a tracker's times, naming the tracker and the option in the error. */
export function resolveTrackerTimes(tracker: string, options: TrackerTimes | undefined) {
  const positive = (name: keyof TrackerTimes) =>
    positiveInteger(tracker, name, options?.[name], TRACKER_DEFAULTS[name], 'ms');
  return { leaseMs: positive('leaseMs'), maxAgeMs: positive('maxAgeMs') };
}

/** A task id as the gateway gives it: a non-empty string, short enough to be a key. */
export function checkTaskId(taskId: unknown): string {
  if (typeof taskId !== 'string' || taskId.length === 0 || taskId.length > 200) {
    throw new JobhookError(
      'invalid_options',
      'A tracked task id must be a non-empty string of at most 200 characters.',
    );
  }
  return taskId;
}

/** A task's tenant: none, or a non-empty string (`''` is refused, lest it settle every tenant's tasks). */
export function checkTenant(tenant: unknown): string | undefined {
  if (tenant !== undefined && (typeof tenant !== 'string' || tenant.length === 0)) {
    throw new JobhookError(
      'invalid_options',
      "A tracked task's tenant must be a non-empty string or undefined.",
    );
  }
  return tenant;
}
