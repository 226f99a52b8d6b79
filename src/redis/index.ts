/**
 * Redis for receivers shared by several instances: `redisDedupeStore({ redis })`, `redisJobTracker`,
 * `redisResultChannel`. `ioredis` is an optional peer dependency this module never loads.
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
