// The delivery-failure warning: the reconciler reads its own webhook's counters at most once per
// intervalMs and warns once each time the gateway's total_failed grew, naming the URL (no query,
// no credentials), how many failed since when, and the last error; never a secret or the key.
import { createClient } from 'jobhook/client';
import { memoryJobTracker } from 'jobhook';
import { startGateway, type Gateway } from 'jobhook/testing';
import { afterEach, expect, it } from 'vitest';
import { createReconciler } from '../../src/reconcile/reconciler.js';
import { resolveReconcile } from '../../src/reconcile/options.js';
import type { DeliveryFailures } from '../../src/reconcile/observer.js';
import { safeLogger } from '../../src/common/logger.js';
import { capturingLogger } from '../support/traffic.js';
import { startSink } from '../gateway/support.js';

let gateway: Gateway;
let sink: Awaited<ReturnType<typeof startSink>>;
afterEach(async () => {
  await gateway?.close();
  await sink?.close();
});

it('warns once per growth of total_failed, reading the counters at most once per intervalMs', async () => {
  gateway = await startGateway({ deliveries: { retryDelaysMs: [] } });
  sink = await startSink(() => 500);
  const secret = 'whsec_' + Buffer.from('a secret of thirty-two bytes....').toString('base64');
  const url = `${sink.url}?token=query-token-123`;
  const client = createClient({ baseUrl: gateway.baseUrl, apiKey: gateway.apiKey });
  await client.webhooks.create({ url, events: ['job.completed', 'job.failed'], secret_key: secret });
  const logger = capturingLogger();
  const reports: DeliveryFailures[] = [];
  let now = Date.now();
  const reconciler = createReconciler({
    options: resolveReconcile({ client, jobs: memoryJobTracker(), intervalMs: 30_000, webhookUrl: url }),
    dispatch: async () => 'handled',
    logger: safeLogger(logger),
    observer: { deliveriesFailed: (failures) => void reports.push(failures) },
    now: () => now,
  });
  const lists = () =>
    gateway.requests.filter((r) => r.method === 'GET' && r.path === '/api/v1/webhooks').length;
  const listsBefore = lists();
  const fail = async (n: number) => {
    for (let i = 0; i < n; i++) await client.images.generate({ model: 'm', prompt: 'a cat' });
    await gateway.settled();
  };

  await reconciler.reconcileOnce(); // the baseline
  const baselineAt = now;
  await fail(2);
  now += 29_999;
  await reconciler.reconcileOnce(); // too soon to read again
  expect(lists() - listsBefore).toBe(1);
  expect(reports).toEqual([]);

  now += 1;
  await reconciler.reconcileOnce();
  expect(lists() - listsBefore).toBe(2);
  expect(reports).toEqual([
    { url: sink.url, failed: 2, totalFailed: 2, since: baselineAt, lastError: 'HTTP 500' },
  ]);
  const warnings = logger.lines.filter((line) => line.includes('failed 2 deliveries'));
  expect(warnings).toEqual([
    `warn jobhook: the gateway failed 2 deliveries to ${sink.url} since ${new Date(baselineAt).toISOString()}; ` +
      'last error: "HTTP 500". Outcomes of tracked jobs are recovered by polling.',
  ]);

  now += 30_000;
  await reconciler.reconcileOnce(); // no growth: nothing
  expect(reports).toHaveLength(1);

  await fail(1);
  now += 30_000;
  await reconciler.reconcileOnce();
  expect(reports.map((r) => r.failed)).toEqual([2, 1]);
  expect(logger.lines.filter((line) => line.includes('the gateway failed'))).toHaveLength(2);

  const all = logger.lines.join('\n');
  for (const hidden of [secret, gateway.apiKey, 'query-token-123']) expect(all).not.toContain(hidden);
  await reconciler.close();
});

it('reads no counters without a webhook URL to watch', async () => {
  gateway = await startGateway();
  const client = createClient({ baseUrl: gateway.baseUrl, apiKey: gateway.apiKey });
  const reconciler = createReconciler({
    options: resolveReconcile({ client, jobs: memoryJobTracker(), intervalMs: 0 }),
    dispatch: async () => 'handled',
    logger: safeLogger(capturingLogger()),
    now: Date.now,
  });
  await reconciler.reconcileOnce();
  expect(gateway.requests.filter((r) => r.path === '/api/v1/webhooks')).toEqual([]);
  reconciler.watchUrl('https://my.app/webhooks');
  await reconciler.reconcileOnce();
  expect(gateway.requests.filter((r) => r.path === '/api/v1/webhooks')).toHaveLength(1);
});

it('reads only webhook records from what a client of its own resolves with, and never throws', async () => {
  // Issue 33: a list that is no array, or holds null, is read as no webhook of ours.
  gateway = await startGateway();
  const client = createClient({ baseUrl: gateway.baseUrl, apiKey: gateway.apiKey });
  const url = 'https://my.app/webhooks';
  let answer: unknown = null;
  const webhooks = { list: async () => answer as never };
  const reports: DeliveryFailures[] = [];
  let now = Date.now();
  const reconciler = createReconciler({
    options: resolveReconcile({
      client: { images: client.images, webhooks },
      jobs: memoryJobTracker(),
      intervalMs: 1000,
      webhookUrl: url,
    }),
    dispatch: async () => 'handled',
    logger: safeLogger(capturingLogger()),
    observer: { deliveriesFailed: (failures) => void reports.push(failures) },
    now: () => now,
  });
  for (const odd of [null, 'webhooks', { url }, [null, 7, 'x']]) {
    answer = odd;
    await expect(reconciler.reconcileOnce()).resolves.toMatchObject({ polled: 0 });
    now += 1000;
  }
  answer = [null, { id: 1, url, total_failed: 1 }];
  await reconciler.reconcileOnce();
  now += 1000;
  answer = [null, { id: 1, url, total_failed: 3 }];
  await reconciler.reconcileOnce();
  expect(reports).toMatchObject([{ failed: 2, totalFailed: 3 }]);
});
