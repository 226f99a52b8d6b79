import { createHash } from 'node:crypto';
import { JobhookError } from '../common/errors.js';
import {
  checkOption,
  MS_OR_NONE,
  nonNegativeNumber,
  optionNames,
  positiveInteger,
  refuseUnknownOptions,
} from '../common/option-checks.js';
import type { DedupeStore } from '../dedupe/dedupe-store.js';
import { bounded } from '../common/deadline.js';

/** What the store uses of an ioredis client (`Redis` or `Cluster`), typed here so ioredis stays optional. */
export interface RedisScriptClient {
  /** Runs a loaded Lua script by its SHA-1. */
  evalsha(sha: string, numKeys: number, ...keysAndArgs: (string | number)[]): Promise<unknown>;
  /** Runs a Lua script, loading it. */
  eval(script: string, numKeys: number, ...keysAndArgs: (string | number)[]): Promise<unknown>;
}

/** Options of {@link redisDedupeStore}. */
export interface RedisDedupeOptions {
  /** An ioredis client (`new Redis(url)`); the store never closes it. */
  redis: RedisScriptClient;
  /** Put before every key, to share one Redis between apps. Default `jobhook:dedupe:`. */
  prefix?: string;
  /** How long a claim lives without renewal, in ms. Default 30,000. */
  leaseMs?: number;
  /** How long a handled event is remembered, in ms: longer than the sender retries. Default 72 hours. */
  ttlMs?: number;
  /** Longest wait for one Redis call, in ms, before the delivery answers 500. Default 5,000; 0: the client's. */
  timeoutMs?: number;
}

/** The Redis store: its options, resolved. */
export interface RedisDedupeStore extends DedupeStore {
  readonly prefix: string;
  readonly ttlMs: number;
}

const HOUR = 60 * 60 * 1000;
const WHERE = 'redisDedupeStore';

const REDIS_DEDUPE_STORE_OPTIONS = optionNames<RedisDedupeOptions>()([
  'redis',
  'prefix',
  'leaseMs',
  'ttlMs',
  'timeoutMs',
]);

/** A {@link DedupeStore} in Redis, one atomic Lua script per call (a failover may lose the last writes). */
export function redisDedupeStore(options: RedisDedupeOptions): RedisDedupeStore {
  refuseUnknownOptions(options, REDIS_DEDUPE_STORE_OPTIONS, 'redisDedupeStore');
  const redis = options?.redis;
  const valid = typeof redis?.evalsha === 'function' && typeof redis.eval === 'function';
  checkOption(WHERE, 'redis', redis, valid, IOREDIS);
  const prefix = options.prefix ?? 'jobhook:dedupe:';
  const leaseMs = positiveInteger(WHERE, 'leaseMs', options.leaseMs, 30_000, 'ms');
  const ttlMs = positiveInteger(WHERE, 'ttlMs', options.ttlMs, 72 * HOUR, 'ms');
  const timeoutMs = nonNegativeNumber(WHERE, 'timeoutMs', options.timeoutMs, 5000, { unit: MS_OR_NONE });

  const call = (what: string, script: Script, key: string, ...args: (string | number)[]) =>
    bounded(
      runScript(redis, script, [prefix + key], args),
      timeoutMs,
      'dedupe_store_failed',
      `The dedupe store failed to ${what}`,
    );
  // The owner's value is tagged, so that no owner token can pass for the `done` marker.
  const tag = (owner: string) => `o:${owner}`;

  return {
    prefix,
    leaseMs,
    ttlMs,
    async claim(key, owner) {
      const result = await call('claim', scripts.claim, key, tag(owner), leaseMs);
      if (result === 'new' || result === 'busy' || result === 'done') return result;
      throw new JobhookError('dedupe_store_failed', `Unexpected answer from Redis: ${String(result)}`);
    },
    async renew(key, owner) {
      return (await call('renew', scripts.renew, key, tag(owner), leaseMs)) === 1;
    },
    async complete(key, owner) {
      await call('complete', scripts.complete, key, tag(owner), ttlMs);
    },
    async release(key, owner) {
      await call('release', scripts.release, key, tag(owner));
    },
  };
}

/** What `redis` must be, in the message that refuses anything else (the same for every Redis part). */
export const IOREDIS = 'an ioredis client, e.g. new Redis(process.env.REDIS_URL)';

/** A Lua script and its SHA-1, the name EVALSHA runs it by. */
export interface Script {
  readonly source: string;
  readonly sha: string;
}

export const script = (source: string): Script => ({
  source,
  sha: createHash('sha1').update(source).digest('hex'),
});

/** Runs `script` by its SHA-1, loading it with EVAL once Redis lost it (a restart). */
export async function runScript(
  redis: RedisScriptClient,
  script: Script,
  keys: readonly string[],
  args: readonly (string | number)[],
): Promise<unknown> {
  try {
    return await redis.evalsha(script.sha, keys.length, ...keys, ...args);
  } catch (error) {
    if (!String((error as Error)?.message).startsWith('NOSCRIPT')) throw error;
    return redis.eval(script.source, keys.length, ...keys, ...args);
  }
}

// The store's scripts: a key holds `o:<owner>` (a claim, for the lease) or `done` (for the retention).

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

/** KEYS[1] key; ARGV[1] `o:<owner>`, ARGV[2] retention in ms. Done when the owner holds it or nobody does. */
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

const scripts = {
  claim: script(CLAIM),
  renew: script(RENEW),
  complete: script(COMPLETE),
  release: script(RELEASE),
};
