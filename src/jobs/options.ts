import { positiveInteger, JobhookError } from '../common/errors.js';
import { TRACKER_DEFAULTS } from './job-tracker.js';

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

/**
 * A task's tenant: `undefined` (none), or a non-empty string. The empty string is refused, not
 * read as "none", so that a tenant lost on the way never settles every tenant's tasks.
 */
export function checkTenant(tenant: unknown): string | undefined {
  if (tenant !== undefined && (typeof tenant !== 'string' || tenant.length === 0)) {
    throw new JobhookError(
      'invalid_options',
      "A tracked task's tenant must be a non-empty string or undefined.",
    );
  }
  return tenant;
}
