// examples/reconcile against the simulator losing half its deliveries, with no retries: every
// job submitted through the app is handled once, those whose webhook was lost by poll.
import { startGateway, type Gateway } from 'jobhook/testing';
import { afterEach, expect, test } from 'vitest';
import { start } from '../../examples/reconcile/server.js';

const SECRET = `whsec_${Buffer.from('reconcile-example-secret-0123456').toString('base64')}`;
let gateway: Gateway;
let app: Awaited<ReturnType<typeof start>> | undefined;
afterEach(async () => {
  await app?.close();
  await gateway?.close();
});

test('handles each job once, by webhook or by poll, when half the deliveries are lost', async () => {
  gateway = await startGateway({ jobs: { stepMs: 1 }, deliveries: { dropRate: 0.5, retryDelaysMs: [] } });
  const lines: string[] = [];
  app = await start({
    gatewayUrl: gateway.baseUrl,
    apiKey: gateway.apiKey,
    secret: SECRET,
    port: 0,
    afterMs: 200,
    intervalMs: 50,
    log: (line) => lines.push(line),
    logger: { error: () => undefined, warn: () => undefined },
  });
  const tasks: string[] = [];
  for (let i = 0; i < 20; i++) {
    const answer = await fetch(`${app.url}/jobs`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ prompt: i % 5 === 0 ? 'please fail' : `a fox ${i}` }),
    });
    expect(answer.status).toBe(202);
    tasks.push(((await answer.json()) as { task_id: string }).task_id);
  }
  await gateway.settled();
  await expect.poll(() => app!.jobs.pending(), { timeout: 20_000 }).toEqual([]);
  for (const task of tasks) expect(lines.filter((line) => line.includes(task))).toHaveLength(1);
  const dropped = gateway.dropped.map((drop) => drop.taskId);
  expect(dropped.length).toBeGreaterThan(0);
  for (const task of dropped) expect(lines.find((line) => line.includes(task))).toContain('(poll)');
  expect(lines.filter((line) => line.includes(' failed '))).toHaveLength(4);
});
