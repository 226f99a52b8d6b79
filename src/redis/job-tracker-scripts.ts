import { createHash } from 'node:crypto';
import type { Script } from './scripts.js';

/**
 * The Lua scripts of the Redis job tracker. Five keys under the prefix: `entries` (a hash, task
 * id to `submittedAt|polls|owner`), `age` (a sorted set by submission time: `pending`), `fresh`
 * (tasks never claimed, by submission time), `due` (tasks claimed before, by the time they are
 * due again: the end of the lease while claimed) and `tenants` (a hash, task id to its tenant,
 * for the tasks tracked with one). The tenant lives apart from `entries` so that entries written
 * before tenants existed read as tasks without one. Redis runs each script atomically, so a task
 * is moved to its claimant's lease in the same step that finds it due. A tenant given as `''`
 * means none (the tracker refuses an empty tenant before it gets here).
 */

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

/**
 * KEYS entries, age, fresh, due, tenants; ARGV task id, tenant or ''. With a tenant, only a task
 * tracked for it.
 */
const SETTLE = `
if ARGV[2] ~= '' and redis.call('HGET', KEYS[5], ARGV[1]) ~= ARGV[2] then return 0 end
redis.call('HDEL', KEYS[1], ARGV[1])
redis.call('ZREM', KEYS[2], ARGV[1])
redis.call('ZREM', KEYS[3], ARGV[1])
redis.call('ZREM', KEYS[4], ARGV[1])
redis.call('HDEL', KEYS[5], ARGV[1])
return 1
`;

/**
 * KEYS entries, fresh, due, tenants; ARGV now, afterMs, limit, owner, lease end. Answers a flat
 * list: task id, submittedAt, polls, tenant or '', for each task claimed.
 */
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

/**
 * KEYS age, entries, tenants; ARGV limit. Answers task id, submittedAt, polls, tenant or '' for
 * the oldest tasks.
 */
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

const script = (source: string): Script => ({
  source,
  sha: createHash('sha1').update(source).digest('hex'),
});

export const trackerScripts = {
  track: script(TRACK),
  settle: script(SETTLE),
  claimDue: script(CLAIM_DUE),
  release: script(RELEASE),
  pending: script(PENDING),
};
