// Two receiver processes on one SQLite file (as pm2 or node:cluster run them): the gateway
// simulator sends each of 1,000 outcomes to both, through a webhook per process, so that the two
// race for every claim; each outcome must be handled once, by one of them, and every delivery end
// answered 2xx (the loser of a race answers 409 while the winner runs, then 200 on the retry).
import { createClient } from 'jobhook/client';
import { startGateway } from 'jobhook/testing';
import { expect, it } from 'vitest';
import { freePort } from '../support/services.js';
import { pool } from '../support/traffic.js';
import { stopChild } from './processes.js';
import { SQLITE_SECRET, sqliteInstances } from '../reconcile/sqlite-instances.js';

const JOBS = 1000;

it('handles each of 1,000 outcomes once across two processes sharing one file', async () => {
  const gateway = await startGateway({
    credits: JOBS * 10,
    rateLimit: false,
    maxConcurrentJobs: JOBS,
    jobs: { stepMs: 1 },
    // A busy 2-core machine can keep an answer waiting for seconds: the retries outlast it.
    deliveries: { retryDelaysMs: [100, 200, 400, 800, 1000, 2000, 2000, 2000], timeoutMs: 20_000 },
  });
  const instances = sqliteInstances(gateway);
  const ports = [await freePort(), await freePort()];
  const children = await Promise.all(ports.map((port) => instances.start(port)));
  try {
    const client = createClient({ baseUrl: gateway.baseUrl, apiKey: gateway.apiKey });
    for (const port of ports) {
      await client.webhooks.create({
        url: `http://127.0.0.1:${port}/webhooks`,
        events: ['job.completed', 'job.failed'],
        secret_key: SQLITE_SECRET,
      });
    }
    const tasks: string[] = [];
    await pool(Array.from({ length: JOBS }), 16, async (_, n) => {
      tasks.push((await client.images.generate({ model: 'm', prompt: `job ${n}` })).task_id);
    });
    await gateway.settled();

    const effects = instances.effects();
    const byTask = new Map<string, string[]>();
    for (const { task, pid } of effects) byTask.set(task, [...(byTask.get(task) ?? []), pid]);
    const twice = [...byTask].filter(([, pids]) => pids.length > 1);
    const byPid: Record<string, number> = {};
    for (const { pid } of effects) byPid[pid] = (byPid[pid] ?? 0) + 1;
    console.log(
      `two processes: ${effects.length} outcomes handled, by pid ${JSON.stringify(byPid)}; ` +
        `${gateway.deliveries.length} attempts`,
    );
    expect(twice, children.map((child) => child.stderr()).join('\n')).toEqual([]);
    expect([...byTask.keys()].sort()).toEqual([...tasks].sort());
    expect(Object.keys(byPid).sort()).toEqual(children.map((child) => String(child.process.pid)).sort());
    const last = new Map(gateway.deliveries.map((attempt) => [attempt.deliveryId, attempt]));
    expect(last.size).toBe(2 * JOBS);
    expect([...last.values()].filter((attempt) => !attempt.ok)).toEqual([]);
  } finally {
    await Promise.all(children.map((child) => stopChild(child, 'SIGKILL')));
    await gateway.close();
    instances.cleanup();
  }
}, 180_000);
