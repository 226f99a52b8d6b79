// jobhook/redis's job tracker against a real Redis: the shared contract, under a prefix of its own.
import { redisJobTracker } from 'jobhook/redis';
import { JobhookError } from 'jobhook';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { trackerContract } from '../stores/tracker-contract.js';
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

  it('reads an entry written before tenants (a deployment upgraded in place) as a task without one', async () => {
    const prefix = `${service.prefix}${runTag()}:`;
    const tracker = redisJobTracker({ redis: service.redis, prefix, leaseMs: 5000 });
    const t0 = 1_800_000_000_000;
    // What the TRACK script wrote before tenants: `submittedAt|polls|owner`, and two sorted sets.
    await service.redis.hset(`${prefix}entries`, 'task_old', `${t0}|0|`);
    await service.redis.zadd(`${prefix}age`, t0, 'task_old');
    await service.redis.zadd(`${prefix}fresh`, t0, 'task_old');
    expect(await tracker.pending()).toStrictEqual([{ taskId: 'task_old', submittedAt: t0, polls: 0 }]);
    const claimed = await tracker.claimDue({ owner: 'o', limit: 10, afterMs: 1000, now: t0 + 1000 });
    expect(claimed).toStrictEqual([{ taskId: 'task_old', submittedAt: t0, polls: 1 }]);
    await tracker.settle('task_old', 'tenant-a');
    expect((await tracker.pending()).map((job) => job.taskId)).toEqual(['task_old']);
    await tracker.settle('task_old');
    expect(await tracker.pending()).toEqual([]);
    expect(await service.redis.keys(`${prefix}*`)).toEqual([]);
  });

  it('refuses a client that is not one, naming what to pass', () => {
    expect(() => redisJobTracker({ redis: undefined as never })).toThrow(JobhookError);
    expect(() => redisJobTracker({ redis: service.redis, leaseMs: -1 })).toThrow(/leaseMs/);
  });
});
