// A receiver on the SQLite store, killed (SIGKILL) and started again on the same file and port:
// the deliveries it handled before are duplicates after, when the gateway sends them again.
import { createClient } from 'jobhook/client';
import { startGateway } from 'jobhook/testing';
import { expect, it } from 'vitest';
import { stopChild } from '../many-instances/processes.js';
import { SQLITE_SECRET, sqliteInstances } from '../reconcile/sqlite-instances.js';
import { freePort } from '../support/services.js';

it('answers a delivery handled before a restart as a duplicate after it, and runs nothing', async () => {
  const gateway = await startGateway({ jobs: { stepMs: 1 }, deliveries: { retryDelaysMs: [] } });
  const instances = sqliteInstances(gateway);
  const port = await freePort();
  let receiver = await instances.start(port);
  try {
    const client = createClient({ baseUrl: gateway.baseUrl, apiKey: gateway.apiKey });
    await client.webhooks.create({
      url: `http://127.0.0.1:${port}/webhooks`,
      events: ['job.completed', 'job.failed'],
      secret_key: SQLITE_SECRET,
    });
    for (let i = 0; i < 10; i++) await client.images.generate({ model: 'm', prompt: `job ${i}` });
    await gateway.settled();
    const before = gateway.deliveries.slice();
    expect(before.map((attempt) => attempt.status)).toEqual(Array(10).fill(200));
    expect(instances.effects()).toHaveLength(10);

    await stopChild(receiver, 'SIGKILL');
    receiver = await instances.start(port);
    for (const attempt of before) gateway.redeliver(attempt.deliveryId);
    await gateway.settled();

    const again = gateway.deliveries.filter((attempt) => attempt.redelivery);
    expect(again).toHaveLength(10);
    for (const attempt of again) {
      expect(attempt.status).toBe(200);
      expect(JSON.parse(attempt.answer!)).toEqual({ ok: true, duplicate: true });
    }
    const pid = String(receiver.process.pid);
    expect(instances.effects().filter((effect) => effect.pid === pid)).toEqual([]);
    expect(instances.effects()).toHaveLength(10);
  } finally {
    await stopChild(receiver, 'SIGKILL');
    await gateway.close();
    instances.cleanup();
  }
}, 90_000);
