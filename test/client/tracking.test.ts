// createClient({ jobs }) records each task it submits; a tracker that fails never fails the
// submission (the credits are spent), it warns naming the task.
import { createClient } from 'jobhook/client';
import { memoryJobTracker, JobhookError } from 'jobhook';
import type { JobTracker } from 'jobhook/extend';
import { startGateway, type Gateway } from 'jobhook/testing';
import { afterEach, beforeEach, expect, it } from 'vitest';

let gateway: Gateway;
beforeEach(async () => {
  gateway = await startGateway();
});
afterEach(() => gateway.close());

it('records each task generate and generateAndWait submit, and nothing else', async () => {
  const jobs = memoryJobTracker();
  const client = createClient({ baseUrl: gateway.baseUrl, apiKey: gateway.apiKey, jobs });
  const before = Date.now();
  const { task_id } = await client.images.generate({ model: 'm', prompt: 'a cat' });
  const waited = await client.images.generateAndWait({ model: 'm', prompt: 'a dog' }, { pollIntervalMs: 20 });
  await client.images.get(task_id);
  const pending = jobs.pending();
  expect(pending.map((job) => job.taskId)).toEqual([task_id, waited.task_id]);
  expect(pending[0]!.submittedAt).toBeGreaterThanOrEqual(before);
});

it('still resolves the submission when the tracker fails, and warns naming the task, never the key', async () => {
  const warnings: string[] = [];
  const broken: JobTracker = {
    ...memoryJobTracker(),
    track: () => Promise.reject(new Error(`connection refused (key ${gateway.apiKey}?)`)),
  };
  const client = createClient({
    baseUrl: gateway.baseUrl,
    apiKey: gateway.apiKey,
    jobs: broken,
    logger: { error: () => undefined, warn: (message) => warnings.push(message) },
  });
  const { task_id } = await client.images.generate({ model: 'm', prompt: 'a cat' });
  expect(warnings).toHaveLength(1);
  expect(warnings[0]).toContain(task_id);
  expect(warnings[0]).toContain('jobs.track()');
  expect(warnings[0]).not.toContain(gateway.apiKey);
});

it('refuses a `jobs` that is no tracker', () => {
  expect(() => createClient({ baseUrl: gateway.baseUrl, apiKey: gateway.apiKey, jobs: {} as never })).toThrow(
    JobhookError,
  );
});
