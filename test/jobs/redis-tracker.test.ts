// jobhook/redis's job tracker against a real Redis: the shared contract, under a prefix of its own.
import { redisJobTracker } from 'jobhook/redis';
import { JobhookError } from 'jobhook';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { trackerContract } from './tracker-contract.js';
import { redisAvailable, redisForTest, runTag } from '../support/services.js';

const available = await redisAvailable();

describe.runIf(available)('redisJobTracker', () => {
  let service: ReturnType<typeof redisForTest>;
  beforeAll(() => {
    service = redisForTest();
  });
  afterAll(() => service.cleanup());

  // Each tracker its own key space: the suite counts what a tracker holds.
  trackerContract({
    make: (times) =>
      redisJobTracker({ redis: service.redis, prefix: `${service.prefix}${runTag()}:`, ...times }),
  });

  it('refuses a client that is not one, naming what to pass', () => {
    expect(() => redisJobTracker({ redis: undefined as never })).toThrow(JobhookError);
    expect(() => redisJobTracker({ redis: service.redis, leaseMs: -1 })).toThrow(/leaseMs/);
  });
});
