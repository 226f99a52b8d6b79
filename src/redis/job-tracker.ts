import { bounded } from '../common/deadline.js';
import {
  checkOption,
  MS_OR_NONE,
  nonNegativeNumber,
  optionNames,
  refuseUnknownOptions,
} from '../common/errors.js';
import { IOREDIS } from './client.js';
import {
  checkTaskId,
  checkTenant,
  resolveTrackerTimes,
  type TrackerTimes,
  type JobTracker,
  type TrackedJob,
} from '../tracker/job-tracker.js';
import type { RedisScriptClient } from './dedupe-store.js';
import type { Script } from './scripts.js';
import { trackerScripts as scripts } from './job-tracker-scripts.js';

/** Options of {@link redisJobTracker}. */
export interface RedisJobTrackerOptions extends TrackerTimes {
  /** An ioredis client (`new Redis(url)`); the tracker never closes it. */
  redis: RedisScriptClient;
  /**
   * Put before the tracker's five keys (`entries`, `age`, `fresh`, `due`, `tenants`). Default
   * `jobhook:jobs:`. On a Redis Cluster give one with a hash tag (`{jobhook-jobs}:`): each call
   * is one script over several of them, so all five must share a slot.
   */
  prefix?: string;
  /** Longest wait for one Redis call, in ms, before it rejects. Default 5,000; 0 for none. */
  timeoutMs?: number;
  /** Clock in milliseconds, for `track` without a time. Default `Date.now`. */
  now?: () => number;
}

/** The Redis tracker: its options, resolved. */
export interface RedisJobTracker extends JobTracker {
  /** The key prefix in use. */
  readonly prefix: string;
}

const REDIS_JOB_TRACKER_OPTIONS = optionNames<RedisJobTrackerOptions>()([
  'redis',
  'prefix',
  'timeoutMs',
  'now',
  'leaseMs',
  'maxAgeMs',
]);

/**
 * A {@link JobTracker} shared by every process that reaches one Redis: a client in a batch script
 * tracks, receivers on any number of instances poll, each task by one instance at a time. Each
 * call is one Lua script (one round trip), atomic.
 *
 * A task's tenant is kept in a hash of its own (`<prefix>tenants`), written only for a task
 * tracked with one: entries tracked before tenants existed read as tasks without one, so a
 * deployment upgraded in place keeps its tasks.
 */
export function redisJobTracker(options: RedisJobTrackerOptions): RedisJobTracker {
  refuseUnknownOptions(options, REDIS_JOB_TRACKER_OPTIONS, 'redisJobTracker');
  const redis = options?.redis;
  const valid = typeof redis?.evalsha === 'function' && typeof redis.eval === 'function';
  checkOption('redisJobTracker', 'redis', redis, valid, IOREDIS);
  const { leaseMs, maxAgeMs } = resolveTrackerTimes('redisJobTracker', options);
  const prefix = options.prefix ?? 'jobhook:jobs:';
  const timeoutMs = nonNegativeNumber('redisJobTracker', 'timeoutMs', options.timeoutMs, 5000, {
    unit: MS_OR_NONE,
  });
  const now = options.now ?? Date.now;
  const key = {
    entries: `${prefix}entries`,
    age: `${prefix}age`,
    fresh: `${prefix}fresh`,
    due: `${prefix}due`,
    tenants: `${prefix}tenants`,
  };

  async function run(script: Script, keys: string[], args: (string | number)[]): Promise<unknown> {
    try {
      return await redis.evalsha(script.sha, keys.length, ...keys, ...args);
    } catch (error) {
      if (!String((error as Error)?.message).startsWith('NOSCRIPT')) throw error;
      return redis.eval(script.source, keys.length, ...keys, ...args);
    }
  }
  const call = (what: string, script: Script, keys: string[], ...args: (string | number)[]) =>
    bounded(run(script, keys, args), timeoutMs, 'job_tracker_failed', `The job tracker failed to ${what}`);

  return {
    prefix,
    leaseMs,
    maxAgeMs,
    async track(taskId, submittedAt = now(), tenant) {
      checkTaskId(taskId);
      checkTenant(tenant);
      const keys = [key.entries, key.age, key.fresh, key.tenants];
      await call('track', scripts.track, keys, taskId, Math.round(submittedAt), tenant ?? '');
    },
    async settle(taskId, tenant) {
      checkTenant(tenant);
      const keys = [key.entries, key.age, key.fresh, key.due, key.tenants];
      await call('settle', scripts.settle, keys, taskId, tenant ?? '');
    },
    async claimDue({ owner, limit, afterMs, now: at }) {
      if (limit <= 0) return [];
      const found = await call(
        'claim',
        scripts.claimDue,
        [key.entries, key.fresh, key.due, key.tenants],
        Math.round(at),
        Math.round(afterMs),
        limit,
        owner,
        Math.round(at + leaseMs),
      );
      return trackedJobs(found);
    },
    async release(taskId, owner, nextPollAt) {
      await call('release', scripts.release, [key.entries, key.due], taskId, owner, Math.round(nextPollAt));
    },
    async pending({ limit = 100 } = {}) {
      if (limit <= 0) return [];
      return trackedJobs(await call('list', scripts.pending, [key.age, key.entries, key.tenants], limit));
    },
  };
}

/** A flat list `id, submittedAt, polls, tenant or '', …` as tracked jobs. */
function trackedJobs(found: unknown): TrackedJob[] {
  const list = Array.isArray(found) ? (found as unknown[]) : [];
  const jobs: TrackedJob[] = [];
  for (let i = 0; i + 3 < list.length; i += 4) {
    const job = { taskId: String(list[i]), submittedAt: Number(list[i + 1]), polls: Number(list[i + 2]) };
    const tenant = String(list[i + 3]);
    jobs.push(tenant === '' ? job : { ...job, tenant });
  }
  return jobs;
}
