import { createHash } from 'node:crypto';

/**
 * The Lua scripts of the Redis store. One key holds either `o:<owner>` (a live claim, with the
 * lease as its expiry) or `done` (handled, with the retention as its expiry); a missing key is
 * free. Each script reads and writes that one key, and Redis runs a script atomically, so the
 * owner check and the write cannot be split by another instance's call.
 */

/** KEYS[1] key; ARGV[1] `o:<owner>`, ARGV[2] lease in ms. Answers `new`, `busy` or `done`. */
const CLAIM = `
if redis.call('SET', KEYS[1], ARGV[1], 'NX', 'PX', ARGV[2]) then return 'new' end
if redis.call('GET', KEYS[1]) == 'done' then return 'done' end
return 'busy'
`;

/** KEYS[1] key; ARGV[1] `o:<owner>`, ARGV[2] lease in ms. 1 when the owner held it and still does. */
const RENEW = `
if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('PEXPIRE', KEYS[1], ARGV[2]) end
return 0
`;

/**
 * KEYS[1] key; ARGV[1] `o:<owner>`, ARGV[2] retention in ms. Marks the key done when the owner
 * holds it or nobody does (its lease expired, the handlers still succeeded); never over another
 * holder's live claim, and a key already done keeps its first retention.
 */
const COMPLETE = `
local value = redis.call('GET', KEYS[1])
if value == ARGV[1] or value == false then
  redis.call('SET', KEYS[1], 'done', 'PX', ARGV[2])
  return 1
end
return 0
`;

/** KEYS[1] key; ARGV[1] `o:<owner>`. Frees the key only while the owner holds it. */
const RELEASE = `
if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end
return 0
`;

/** A script and its SHA-1, the name EVALSHA runs it by. */
export interface Script {
  readonly source: string;
  readonly sha: string;
}

const script = (source: string): Script => ({
  source,
  sha: createHash('sha1').update(source).digest('hex'),
});

export const scripts = {
  claim: script(CLAIM),
  renew: script(RENEW),
  complete: script(COMPLETE),
  release: script(RELEASE),
};
