import { bounded } from '../common/deadline.js';
import {
  checkOption,
  MS_OR_NONE,
  nonNegativeNumber,
  optionNames,
  refuseUnknownOptions,
} from '../common/option-checks.js';
import {
  checkTaskId,
  checkTenant,
  resolveTrackerTimes,
  type TrackerTimes,
  type JobTracker,
  type TrackedJob,
} from '../tracker/job-tracker.js';
import { IOREDIS, runScript, script, type RedisScriptClient, type Script } from './dedupe-store.js';

/** Options of {@link redisJobTracker}. */
export interface RedisJobTrackerOptions extends TrackerTimes {
  /** An ioredis client (`new Redis(url)`); the tracker never closes it. */
  redis: RedisScriptClient;
  /** Put before the tracker's five keys. Default `jobhook:jobs:`; on a Cluster, with a hash tag (`{jobs}:`). */
  prefix?: string;
  /** Longest wait for one Redis call, in ms, before it rejects. Default 5,000; 0 for none. */
  timeoutMs?: number;
  /** Clock in milliseconds, for `track` without a time. Default `Date.now`. */
  now?: () => number;
}

/** The Redis tracker: its options, resolved. */
export interface RedisJobTracker extends JobTracker {
  readonly prefix: string;
  has(taskId: string, tenant?: string): Promise<boolean>;
}

const REDIS_JOB_TRACKER_OPTIONS = optionNames<RedisJobTrackerOptions>()([
  'redis',
  'prefix',
  'timeoutMs',
  'now',
  'leaseMs',
  'maxAgeMs',
]);

/** A {@link JobTracker} shared by every process that reaches one Redis, one atomic Lua script per call. */
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

  const call = (what: string, script: Script, keys: string[], ...args: (string | number)[]) =>
    bounded(
      runScript(redis, script, keys, args),
      timeoutMs,
      'job_tracker_failed',
      `The job tracker failed to ${what}`,
    );

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
    async has(taskId, tenant) {
      checkTenant(tenant);
      const found = await call(
        'look a task up',
        scripts.has,
        [key.entries, key.tenants],
        taskId,
        tenant ?? '',
      );
      return found === 1;
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

// The tracker's scripts, over `entries` (task id to `submittedAt|polls|owner`), `age` and `fresh` (by
// submission), `due` and `tenants` (apart, so older entries read as tasks without one; `''`: none).

/** KEYS entries, age, fresh, tenants; ARGV task id, submittedAt, tenant or ''. */
const TRACK = `
if redis.call('HSETNX', KEYS[1], ARGV[1], ARGV[2] .. '|0|') == 1 then
  redis.call('ZADD', KEYS[2], ARGV[2], ARGV[1])
  redis.call('ZADD', KEYS[3], ARGV[2], ARGV[1])
  if ARGV[3] ~= '' then
    redis.call('HSET', KEYS[4], ARGV[1], ARGV[3])
  else
    redis.call('HDEL', KEYS[4], ARGV[1])
  end
end
return 1
`;

/** KEYS entries, age, fresh, due, tenants; ARGV task id, tenant or '' (with one, only a task tracked for it). */
const SETTLE = `
if ARGV[2] ~= '' and redis.call('HGET', KEYS[5], ARGV[1]) ~= ARGV[2] then return 0 end
redis.call('HDEL', KEYS[1], ARGV[1])
redis.call('ZREM', KEYS[2], ARGV[1])
redis.call('ZREM', KEYS[3], ARGV[1])
redis.call('ZREM', KEYS[4], ARGV[1])
redis.call('HDEL', KEYS[5], ARGV[1])
return 1
`;

/** KEYS entries, tenants; ARGV task id, tenant or '' (with one, only a task tracked for it). */
const HAS = `
if redis.call('HEXISTS', KEYS[1], ARGV[1]) == 0 then return 0 end
if ARGV[2] ~= '' and redis.call('HGET', KEYS[2], ARGV[1]) ~= ARGV[2] then return 0 end
return 1
`;

/** KEYS entries, fresh, due, tenants; ARGV now, afterMs, limit, owner, lease end. Answers as PENDING does. */
const CLAIM_DUE = `
local limit = tonumber(ARGV[3])
local out = {}
local function take(id)
  local entry = redis.call('HGET', KEYS[1], id)
  if not entry then
    redis.call('ZREM', KEYS[2], id)
    redis.call('ZREM', KEYS[3], id)
    redis.call('HDEL', KEYS[4], id)
    return
  end
  local submitted, polls = string.match(entry, '^([^|]*)|([^|]*)|')
  polls = tonumber(polls) + 1
  redis.call('HSET', KEYS[1], id, submitted .. '|' .. polls .. '|' .. ARGV[4])
  redis.call('ZREM', KEYS[2], id)
  redis.call('ZADD', KEYS[3], ARGV[5], id)
  table.insert(out, id)
  table.insert(out, submitted)
  table.insert(out, tostring(polls))
  table.insert(out, redis.call('HGET', KEYS[4], id) or '')
end
for _, id in ipairs(redis.call('ZRANGEBYSCORE', KEYS[3], '-inf', ARGV[1], 'LIMIT', 0, limit)) do
  take(id)
end
local left = limit - #out / 4
if left > 0 then
  local cutoff = tonumber(ARGV[1]) - tonumber(ARGV[2])
  for _, id in ipairs(redis.call('ZRANGEBYSCORE', KEYS[2], '-inf', cutoff, 'LIMIT', 0, left)) do
    take(id)
  end
end
return out
`;

/** KEYS entries, due; ARGV task id, owner, nextPollAt. Only while `owner` holds the task. */
const RELEASE = `
local entry = redis.call('HGET', KEYS[1], ARGV[1])
if not entry then return 0 end
local submitted, polls, owner = string.match(entry, '^([^|]*)|([^|]*)|(.*)$')
if owner ~= ARGV[2] then return 0 end
redis.call('HSET', KEYS[1], ARGV[1], submitted .. '|' .. polls .. '|')
redis.call('ZADD', KEYS[2], ARGV[3], ARGV[1])
return 1
`;

/** KEYS age, entries, tenants; ARGV limit. Answers `id, submittedAt, polls, tenant or ''` per task. */
const PENDING = `
local out = {}
for _, id in ipairs(redis.call('ZRANGE', KEYS[1], 0, tonumber(ARGV[1]) - 1)) do
  local entry = redis.call('HGET', KEYS[2], id)
  if entry then
    local submitted, polls = string.match(entry, '^([^|]*)|([^|]*)|')
    table.insert(out, id)
    table.insert(out, submitted)
    table.insert(out, polls)
    table.insert(out, redis.call('HGET', KEYS[3], id) or '')
  end
end
return out
`;

const scripts = {
  track: script(TRACK),
  settle: script(SETTLE),
  has: script(HAS),
  claimDue: script(CLAIM_DUE),
  release: script(RELEASE),
  pending: script(PENDING),
};
