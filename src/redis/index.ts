/**
 * A dedupe store in Redis, shared by every instance of your app:
 *
 *   import Redis from 'ioredis';
 *   import { createReceiver } from 'jobhook';
 *   import { redisDedupeStore } from 'jobhook/redis';
 *
 *   const redis = new Redis(process.env.REDIS_URL!);
 *   const receiver = createReceiver({ secret, dedupe: redisDedupeStore({ redis }) });
 *
 * `ioredis` is an optional peer dependency: install it yourself; this module never loads it.
 *
 * @module jobhook/redis
 */
export {
  redisDedupeStore,
  type RedisDedupeOptions,
  type RedisDedupeStore,
  type RedisScriptClient,
} from './dedupe-store.js';
export {
  redisResultChannel,
  type RedisResultChannelOptions,
  type RedisPubSubClient,
  type RedisSubscriber,
} from './result-channel.js';
export { redisJobTracker, type RedisJobTracker, type RedisJobTrackerOptions } from './job-tracker.js';
export type { JobTracker, TrackedJob } from '../tracker/job-tracker.js';
export type { DedupeStore, ClaimResult } from '../dedupe/dedupe-store.js';
