import {
  checkOption,
  MS_OR_NONE,
  nonNegativeNumber,
  optionNames,
  positiveInteger,
  refuseUnknownOptions,
  JobhookError,
} from '../common/errors.js';
import { IOREDIS } from './client.js';
import type { DedupeStore } from '../dedupe/dedupe-store.js';
import { bounded } from '../common/deadline.js';
import { scripts, type Script } from './scripts.js';

/**
 * The part of an ioredis client (`Redis` or `Cluster`, ioredis 5 or 6) the store uses. Typed
 * here rather than imported, so that `jobhook/redis` loads without ioredis until you create the
 * client yourself.
 */
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
  /**
   * How long a handled event is remembered, in ms. Default 72 hours. It must outlast the sender's
   * retry window: a delivery retried after it runs its handlers again.
   */
  ttlMs?: number;
  /**
   * Longest wait for one Redis call, in ms, before it rejects (the delivery then answers 500 and
   * the sender retries). Default 5,000; 0 leaves it to the client's own settings.
   */
  timeoutMs?: number;
}

/** The Redis store: its options, resolved. */
export interface RedisDedupeStore extends DedupeStore {
  /** The key prefix in use. */
  readonly prefix: string;
  /** How long a handled event is remembered, in ms. */
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

/**
 * A {@link DedupeStore} shared by every instance that reaches one Redis. Each call is one round
 * trip: a Lua script that compares the owner and writes in one step (EVALSHA, falling back to
 * EVAL once after Redis lost its script cache, for instance on a restart).
 *
 * Limits: with asynchronous replication, a failover can lose the last writes, so an event being
 * claimed or just marked done at that moment may run once more; past `ttlMs` an event is
 * forgotten.
 */
export function redisDedupeStore(options: RedisDedupeOptions): RedisDedupeStore {
  refuseUnknownOptions(options, REDIS_DEDUPE_STORE_OPTIONS, 'redisDedupeStore');
  const redis = options?.redis;
  const valid = typeof redis?.evalsha === 'function' && typeof redis.eval === 'function';
  checkOption(WHERE, 'redis', redis, valid, IOREDIS);
  const prefix = options.prefix ?? 'jobhook:dedupe:';
  const leaseMs = positiveInteger(WHERE, 'leaseMs', options.leaseMs, 30_000, 'ms');
  const ttlMs = positiveInteger(WHERE, 'ttlMs', options.ttlMs, 72 * HOUR, 'ms');
  const timeoutMs = nonNegativeNumber(WHERE, 'timeoutMs', options.timeoutMs, 5000, { unit: MS_OR_NONE });

  async function run(script: Script, key: string, ...args: (string | number)[]): Promise<unknown> {
    try {
      return await redis.evalsha(script.sha, 1, prefix + key, ...args);
    } catch (error) {
      if (!String((error as Error)?.message).startsWith('NOSCRIPT')) throw error;
      // EVAL runs the script and caches it again: the next EVALSHA finds it.
      return redis.eval(script.source, 1, prefix + key, ...args);
    }
  }
  const call = (what: string, script: Script, key: string, ...args: (string | number)[]) =>
    bounded(
      run(script, key, ...args),
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
