// Reconciliation across a SIGKILL on the SQLite tracker: the receiver process submits the tasks
// through its own client (createClient({ jobs: sqliteJobTracker(...) })), which tracks them in the
// file, and is killed; the tasks end while it is down and their webhooks fail (nothing listens;
// the gateway retries none); the receiver started again on the file finds them by poll and
// handles each once. The test's own client tracks nothing: the file holds what the killed process wrote.
import { createClient } from 'jobhook/client';
import { sqliteJobTracker } from 'jobhook/sqlite';
import { startGateway } from 'jobhook/testing';
import { expect, it } from 'vitest';
import { stopChild } from '../many-instances/processes.js';
import { freePort } from '../support/services.js';
import { SQLITE_SECRET, sqliteInstances } from './sqlite-instances.js';

it('handles, after the restart, the outcomes whose webhooks were lost while the receiver was down', async () => {
  const gateway = await startGateway({ jobs: { auto: false }, deliveries: { retryDelaysMs: [] } });
  const instances = sqliteInstances(gateway);
  const port = await freePort();
  // Nothing is due for a minute before the kill: only the process after it polls.
  const before = await instances.start(port);
  let after: Awaited<ReturnType<typeof instances.start>> | undefined;
  try {
    const client = createClient({ baseUrl: gateway.baseUrl, apiKey: gateway.apiKey });
    await client.webhooks.create({
      url: `http://127.0.0.1:${port}/webhooks`,
      events: ['job.completed', 'job.failed'],
      secret_key: SQLITE_SECRET,
    });
    const tasks: string[] = [];
    for (let i = 0; i < 5; i++) {
      const submitted = await fetch(`http://127.0.0.1:${port}/submit`, { method: 'POST' });
      expect(submitted.status).toBe(200);
      tasks.push(((await submitted.json()) as { task_id: string }).task_id);
    }
    // Read from the file: what the process about to be killed tracked there.
    const jobs = sqliteJobTracker({ path: instances.path });
    expect(
      jobs
        .pending()
        .map((job) => job.taskId)
        .sort(),
    ).toEqual([...tasks].sort());

    await stopChild(before, 'SIGKILL');
    for (const task of tasks) {
      gateway.advanceJob(task);
      gateway.advanceJob(task);
    }
    await gateway.settled();
    expect(gateway.deliveries.map((attempt) => attempt.taskId).sort()).toEqual([...tasks].sort());
    expect(gateway.deliveries.filter((attempt) => attempt.ok)).toEqual([]);
    expect(instances.effects()).toEqual([]);

    after = await instances.start(port, { AFTER_MS: '0' });
    await expect.poll(() => instances.effects().length, { timeout: 30_000 }).toBe(5);
    const pid = String(after.process.pid);
    expect(
      instances
        .effects()
        .map((effect) => effect.task)
        .sort(),
    ).toEqual([...tasks].sort());
    for (const effect of instances.effects()) expect(effect).toMatchObject({ pid, source: 'poll' });
    await expect.poll(() => jobs.pending().length).toBe(0);
  } finally {
    await stopChild(before, 'SIGKILL');
    if (after) await stopChild(after, 'SIGKILL');
    await gateway.close();
    instances.cleanup();
  }
}, 90_000);
