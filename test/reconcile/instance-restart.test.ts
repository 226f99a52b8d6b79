// A receiver restarted after jobs were submitted (a new process, the same Redis tracker) handles
// the outcomes of the tasks submitted before the restart: the first process is SIGKILLed before
// any of them was due, every delivery is lost, and the new process finds them all by poll.
import { createClient } from 'jobhook/client';
import { redisJobTracker } from 'jobhook/redis';
import { startGateway } from 'jobhook/testing';
import { describe, expect, it } from 'vitest';
import { freePort, REDIS_URL, redisAvailable, redisForTest } from '../support/services.js';
import { startChild, stopChild } from '../many-instances/processes.js';

const SECRET = `whsec_${Buffer.from('reconcile-restart-secret-32bytes').toString('base64')}`;

describe.runIf(await redisAvailable())('a receiver restarted after submitting', () => {
  it('handles, in its new process, the outcomes of tasks submitted before the restart', async () => {
    const service = redisForTest();
    const gateway = await startGateway({
      jobs: { stepMs: 1 },
      deliveries: { dropRate: 1, retryDelaysMs: [] },
    });
    try {
      const env = {
        VARIANT: 'redis',
        REDIS_URL,
        PREFIX: service.prefix,
        SECRET,
        BASE_URL: gateway.baseUrl,
        API_KEY: gateway.apiKey,
        LEASE_MS: '10000',
        INTERVAL_MS: '100',
      };
      const port = await freePort();
      // Before the restart: nothing is due for a minute.
      const before = await startChild('../reconcile/instance.ts', {
        ...env,
        AFTER_MS: '60000',
        PORT: String(port),
      });
      const jobs = redisJobTracker({ redis: service.redis, prefix: `${service.prefix}jobs:` });
      const client = createClient({ baseUrl: gateway.baseUrl, apiKey: gateway.apiKey, jobs });
      await client.webhooks.create({
        url: `http://127.0.0.1:${port}/webhooks`,
        events: ['job.completed', 'job.failed'],
        secret_key: SECRET,
      });
      const tasks: string[] = [];
      for (let i = 0; i < 20; i++)
        tasks.push((await client.images.generate({ model: 'm', prompt: `job ${i}` })).task_id);
      await gateway.settled();
      await stopChild(before, 'SIGKILL');
      expect(gateway.dropped).toHaveLength(20);

      const after = await startChild('../reconcile/instance.ts', {
        ...env,
        AFTER_MS: '0',
        PORT: String(port),
      });
      try {
        const effects = async () => service.redis.lrange(`${service.prefix}effects`, 0, -1);
        await expect.poll(async () => (await effects()).length, { timeout: 30_000 }).toBe(20);
        const lines = await effects();
        const pid = String(after.process.pid);
        expect(lines.map((line) => line.split(' ')[0]).sort()).toEqual([...tasks].sort());
        for (const line of lines) expect(line.split(' ').slice(1)).toEqual([pid, 'poll']);
        await expect.poll(async () => (await jobs.pending()).length).toBe(0);
      } finally {
        await stopChild(after, 'SIGKILL');
      }
    } finally {
      await gateway.close();
      await service.cleanup();
    }
  }, 90_000);
});
