/**
 * Tracking and reconciliation (issue 22): what it costs.
 *
 * - Gateway requests per job: N jobs through a client with a tracker, a receiver with `reconcile`
 *   over HTTP, the simulator delivering every outcome (dropRate 0) or losing half (0.5) with no
 *   retries; every request the simulator answered, counted by kind, once every outcome is handled.
 * - Added time per delivery: `receive()` of a signed job outcome whose task is tracked, with
 *   `reconcile` (the receiver tells the tracker the task is settled) against the same receiver
 *   without it, in memory and on Redis, one delivery at a time, interleaved round by round.
 * - Added time per submission: `client.images.generate()` against the simulator with a Redis
 *   tracker against none.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { randomBytes } from 'node:crypto';
import { Redis } from 'ioredis';
import { SECRET } from './fixtures.js';
import { median } from './measure.js';
import {
  createClient,
  createReceiver,
  memoryDedupeStore,
  memoryJobTracker,
  nodeHandler,
  redisJobTracker,
  signDelivery,
  startGateway,
  type JobTracker,
} from './jobhook.js';

export interface ReconcileOptions {
  jobs: number;
  rounds: number;
  deliveries: number;
}

export interface RequestCount {
  dropRate: number;
  jobs: number;
  dropped: number;
  /** Deliveries attempted whose one attempt failed (no retries), with why. */
  failedDeliveries: Record<string, number>;
  submissions: number;
  polls: number;
  webhookLists: number;
  other: number;
  byPoll: number;
  seconds: number;
}

export interface ReconcileResults {
  options: ReconcileOptions;
  requests: RequestCount[];
  /** µs per delivery, one entry per round. */
  delivery: Record<'without' | 'memory' | 'redis', number[]>;
  /** µs per submission, one entry per round. */
  submission: Record<'without' | 'redis', number[]>;
  skipped: string[];
}

const REDIS_URL = process.env.JOBHOOK_REDIS_URL || 'redis://127.0.0.1:6379';

async function countRequests(jobs: number, dropRate: number): Promise<RequestCount> {
  const started = Date.now();
  const gateway = await startGateway({
    credits: jobs * 10,
    maxConcurrentJobs: jobs,
    rateLimit: false,
    // Jobs take ~200 ms, so the gateway's answer to a submission comes before the job's webhook,
    // as with real image jobs (seconds to minutes); see "Limits" in docs/reconciliation.md.
    jobs: { stepMs: 100 },
    // One process holds the simulator, the client and the receiver: a delivery takes seconds here.
    deliveries: { dropRate, retryDelaysMs: [], timeoutMs: 30_000 },
  });
  const tracker = memoryJobTracker();
  const client = createClient({ baseUrl: gateway.baseUrl, apiKey: gateway.apiKey, jobs: tracker });
  let byPoll = 0;
  const receiver = createReceiver({
    secret: SECRET,
    reconcile: { client, jobs: tracker, afterMs: 10_000, intervalMs: 500 },
  });
  const handle = (_event: unknown, context: { source: string }) => {
    if (context.source === 'poll') byPoll++;
  };
  receiver.onJobCompleted(handle).onJobFailed(handle);
  const server = createServer(nodeHandler(receiver, { path: '/webhooks' }));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/webhooks`;
  await receiver.register({ client, url });
  const before = gateway.requests.length;
  let n = 0;
  await Promise.all(
    Array.from({ length: 16 }, async () => {
      while (n++ < jobs) await client.images.generate({ model: 'm', prompt: 'a cat' });
    }),
  );
  await gateway.settled();
  while (tracker.size > 0) await new Promise((resolve) => setTimeout(resolve, 20));
  const requests = gateway.requests.slice(before);
  const count = (test: (r: { method: string; path: string }) => boolean) => requests.filter(test).length;
  const result: RequestCount = {
    dropRate,
    jobs,
    dropped: gateway.dropped.length,
    failedDeliveries: Object.fromEntries(
      Object.entries(
        gateway.deliveries
          .filter((attempt) => !attempt.ok)
          .reduce<Record<string, number>>((why, attempt) => {
            const reason = attempt.error ?? String(attempt.status);
            why[reason] = (why[reason] ?? 0) + 1;
            return why;
          }, {}),
      ),
    ),
    submissions: count((r) => r.method === 'POST' && r.path === '/api/v1/images/generate'),
    polls: count((r) => r.method === 'GET' && r.path.startsWith('/api/v1/images/')),
    webhookLists: count((r) => r.method === 'GET' && r.path === '/api/v1/webhooks'),
    other: 0,
    byPoll,
    seconds: (Date.now() - started) / 1000,
  };
  result.other = requests.length - result.submissions - result.polls - result.webhookLists;
  await receiver.close();
  server.close();
  await gateway.close();
  return result;
}

/** A receiver whose tracker knows each delivery's task, so `reconcile` has a settle to make. */
function deliveryCase(tracker: JobTracker | undefined, client: Parameters<typeof createClient>[0]) {
  const receiver = createReceiver({
    secret: SECRET,
    dedupe: memoryDedupeStore({ maxEntries: 1_000_000 }),
    ...(tracker && { reconcile: { client: createClient(client), jobs: tracker, intervalMs: 0 } }),
  }).onJobCompleted(() => undefined);
  return async (count: number): Promise<number> => {
    const deliveries = [];
    for (let i = 0; i < count; i++) {
      const taskId = `task_${randomBytes(8).toString('hex')}`;
      if (tracker) await tracker.track(taskId);
      deliveries.push(
        signDelivery({
          secret: SECRET,
          payload: {
            id: `evt_${taskId}`,
            type: 'job.completed',
            created_at: new Date().toISOString(),
            data: { task_id: taskId, status: 'completed', image_url: 'https://cdn.example.com/x.png' },
          },
        }),
      );
    }
    const start = performance.now();
    for (const delivery of deliveries) {
      const answer = await receiver.receive({ headers: delivery.headers, body: delivery.body });
      if (answer.status !== 200) throw new Error(`bench: delivery answered ${answer.status}`);
    }
    return ((performance.now() - start) * 1000) / count;
  };
}

export async function runReconcile(options: ReconcileOptions): Promise<ReconcileResults> {
  const skipped: string[] = [];
  const requests = [await countRequests(options.jobs, 0), await countRequests(options.jobs, 0.5)];

  let redis: Redis | undefined = new Redis(REDIS_URL, { lazyConnect: true, maxRetriesPerRequest: 1 });
  redis.on('error', () => undefined);
  try {
    await redis.connect();
  } catch {
    skipped.push(`Redis at ${REDIS_URL} did not answer: the Redis cases are left out`);
    redis.disconnect();
    redis = undefined;
  }
  const prefix = `jobhook-bench:${randomBytes(4).toString('hex')}:`;
  const gateway = await startGateway({
    credits: 1e9,
    maxConcurrentJobs: 1e6,
    rateLimit: false,
    jobs: { auto: false },
  });
  const clientOptions = { baseUrl: gateway.baseUrl, apiKey: gateway.apiKey };
  const delivery: ReconcileResults['delivery'] = { without: [], memory: [], redis: [] };
  const submission: ReconcileResults['submission'] = { without: [], redis: [] };
  const cases = {
    without: deliveryCase(undefined, clientOptions),
    memory: deliveryCase(memoryJobTracker(), clientOptions),
    ...(redis && { redis: deliveryCase(redisJobTracker({ redis, prefix }), clientOptions) }),
  };
  const plain = createClient(clientOptions);
  const tracked = redis && createClient({ ...clientOptions, jobs: redisJobTracker({ redis, prefix }) });
  const submit = async (client: ReturnType<typeof createClient>, count: number) => {
    const start = performance.now();
    for (let i = 0; i < count; i++) await client.images.generate({ model: 'm', prompt: 'a cat' });
    return ((performance.now() - start) * 1000) / count;
  };
  for (const run of Object.values(cases)) await run(200); // warm-up
  for (let round = 0; round < options.rounds; round++) {
    for (const [name, run] of Object.entries(cases))
      delivery[name as keyof typeof delivery].push(await run(options.deliveries));
    submission.without.push(await submit(plain, 200));
    if (tracked) submission.redis.push(await submit(tracked, 200));
  }
  await gateway.close();
  if (redis) {
    let cursor = '0';
    do {
      const [next, keys] = await redis.scan(cursor, 'MATCH', `${prefix}*`, 'COUNT', 1000);
      cursor = next;
      if (keys.length > 0) await redis.del(...keys);
    } while (cursor !== '0');
    redis.disconnect();
  }
  return { options, requests, delivery, submission, skipped };
}

/** The RESULTS.md section. */
export function reconcileSection(r: ReconcileResults): string[] {
  const us = (values: number[]) => (values.length ? `${median(values).toFixed(1)} µs` : 'n/a');
  const added = (values: number[], base: number[]) =>
    values.length ? `+${(median(values) - median(base)).toFixed(1)} µs` : '';
  const out = ['## Tracking and reconciliation (issue 22)', ''];
  out.push(
    `${r.options.jobs} jobs per row: a client with a memory tracker, a receiver with \`reconcile\` ` +
      '(afterMs 10 s, intervalMs 500 ms) over HTTP, the simulator retrying nothing; every request it answered, once every outcome was handled.',
    '',
    '| deliveries lost | dropped | failed attempts | outcomes by poll | submissions | status polls | webhook lists | gateway requests per job | polls per job |',
    '| --- | --- | --- | --- | --- | --- | --- | --- | --- |',
  );
  for (const c of r.requests) {
    const total = c.submissions + c.polls + c.webhookLists + c.other;
    out.push(
      `| ${c.dropRate * 100} % | ${c.dropped} | ${JSON.stringify(c.failedDeliveries)} | ${c.byPoll} | ${c.submissions} | ${c.polls} | ${c.webhookLists} (${c.seconds.toFixed(1)} s) | ` +
        `${(total / c.jobs).toFixed(3)} | ${(c.polls / c.jobs).toFixed(3)} |`,
    );
  }
  out.push(
    '',
    `Added time per delivery (\`receive()\` of a tracked task's outcome, one at a time, median of ${r.options.rounds} rounds of ${r.options.deliveries}):`,
    '',
    '| receiver | µs per delivery | added |',
    '| --- | --- | --- |',
    `| without \`reconcile\` | ${us(r.delivery.without)} | |`,
    `| \`reconcile\`, \`memoryJobTracker\` | ${us(r.delivery.memory)} | ${added(r.delivery.memory, r.delivery.without)} |`,
    `| \`reconcile\`, \`redisJobTracker\` | ${us(r.delivery.redis)} | ${added(r.delivery.redis, r.delivery.without)} |`,
    '',
    'Added time per submission (`client.images.generate()` against the simulator on loopback):',
    '',
    '| client | µs per submission | added |',
    '| --- | --- | --- |',
    `| without \`jobs\` | ${us(r.submission.without)} | |`,
    `| \`jobs: redisJobTracker\` | ${us(r.submission.redis)} | ${added(r.submission.redis, r.submission.without)} |`,
    '',
  );
  for (const line of r.skipped) out.push(`- ${line}`);
  return out;
}

// Run alone: `npm run build && npx esbuild bench/*.ts ... && node …/reconcile.js` (see package.json
// `bench`), or through `npm run bench`, which runs it as one step.
if (process.argv[1]?.endsWith('reconcile.js')) {
  const quick = process.env.BENCH_QUICK === '1';
  const results = await runReconcile(
    quick ? { jobs: 200, rounds: 3, deliveries: 300 } : { jobs: 1000, rounds: 7, deliveries: 1000 },
  );
  console.log(reconcileSection(results).join('\n'));
}
