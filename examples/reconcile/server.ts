/**
 * No job lost: an app that submits image jobs (`POST /jobs` with `{ "prompt": "…" }` answers
 * `{ task_id }` at once) and handles each job's outcome once, whether its webhook arrives or
 * not. The client tracks every task it submits; the receiver polls the status of those whose
 * outcome is overdue, through the same dedupe and handlers (`context.source` says which way it
 * came), and warns when the gateway's counters show failed deliveries.
 *
 *   GATEWAY_URL=https://… GATEWAY_API_KEY=… WEBHOOK_SECRET=whsec_… PUBLIC_URL=https://example.com \
 *     REDIS_URL=redis://127.0.0.1:6379 npx tsx examples/reconcile/server.ts
 *   curl -X POST localhost:3000/jobs -H 'content-type: application/json' -d '{"prompt":"a fox"}'
 *   npx jobhook jobs --redis-url redis://127.0.0.1:6379    # what is still waiting
 *
 * The tracker and the dedupe store are in ./jobhook.db (jobhook/sqlite): a restart forgets
 * nothing, and the processes of this machine share them. With REDIS_URL they are in Redis, shared
 * by instances on several machines. Without GATEWAY_URL it starts the gateway simulator, which
 * loses half the deliveries (`dropRate: 0.5`) and retries none, to show the reconciler at work;
 * the simulator forgets its tasks when it stops, so then they are in this process's memory.
 */
import { once } from 'node:events';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { pathToFileURL } from 'node:url';
import {
  createReceiver,
  memoryDedupeStore,
  memoryJobTracker,
  type JobCompletedEvent,
  type JobFailedEvent,
  type Logger,
} from 'jobhook';
import type { DedupeStore, JobTracker } from 'jobhook/extend';
import { createClient, GatewayError } from 'jobhook/client';
import { nodeHandler } from 'jobhook/node';

export interface ReconcileExampleOptions {
  gatewayUrl: string;
  apiKey: string;
  /** A stable secret from configuration: the same on every restart and every instance. */
  secret: string;
  port?: number;
  host?: string;
  /** Where the gateway reaches this app. Default: http://host:port, fine for a local gateway. */
  publicUrl?: string;
  /** The tracker and store (`sqliteJobTracker`, `redisJobTracker`, …). Default: in memory, for tests. */
  jobs?: JobTracker;
  dedupe?: DedupeStore;
  /** Poll a task once its outcome is this late, in ms. Default 120,000. */
  afterMs?: number;
  /** How often to look for overdue tasks, in ms. Default 30,000. */
  intervalMs?: number;
  /** Where each handled outcome is written. Default console.log. */
  log?: (line: string) => void;
  logger?: Logger;
}

export async function start(options: ReconcileExampleOptions) {
  const { port = 3000, host = '127.0.0.1', log = (line) => console.log(line) } = options;
  const jobs = options.jobs ?? memoryJobTracker();
  const client = createClient({ baseUrl: options.gatewayUrl, apiKey: options.apiKey, jobs });
  const receiver = createReceiver({
    secret: options.secret,
    dedupe: options.dedupe ?? memoryDedupeStore(),
    logger: options.logger ?? console,
    reconcile: {
      client,
      jobs,
      ...(options.afterMs !== undefined && { afterMs: options.afterMs }),
      ...(options.intervalMs !== undefined && { intervalMs: options.intervalMs }),
    },
  })
    .onJobCompleted((event: JobCompletedEvent, { source }) => {
      // Your side effect: store the image, notify the user. It runs once per job.
      log(`job ${event.data.task_id} completed (${source}): ${event.data.image_url}`);
    })
    .onJobFailed((event: JobFailedEvent, { source }) => {
      log(`job ${event.data.task_id} failed (${source}): ${event.data.error.message}`);
    });

  async function submit(req: IncomingMessage, res: ServerResponse) {
    const input = await readJson(req);
    const prompt = typeof input?.prompt === 'string' ? input.prompt : undefined;
    if (!prompt)
      return answer(res, 400, { error: { code: 'invalid_request', message: 'Send {"prompt": "…"}.' } });
    try {
      const { task_id } = await client.images.generate({ model: 'default', prompt });
      answer(res, 202, { task_id });
    } catch (error) {
      if (!(error instanceof GatewayError)) throw error;
      answer(res, 502, { error: { code: error.code, message: 'The gateway refused the job.' } });
    }
  }

  const webhooks = nodeHandler(receiver, { path: '/webhooks' });
  const server = createServer((req, res) =>
    webhooks(req, res, () => {
      if (req.method === 'POST' && req.url === '/jobs') {
        submit(req, res).catch(() => answer(res, 500, { error: { code: 'internal_error' } }));
      } else {
        res.writeHead(404).end();
      }
    }),
  );
  server.listen(port, host);
  await once(server, 'listening');
  const url = `http://${host}:${(server.address() as AddressInfo).port}`;
  // Registering also tells the reconciler which webhook's delivery counters to watch.
  await receiver.register({ client, url: `${options.publicUrl ?? url}/webhooks` });

  return {
    url,
    receiver,
    jobs,
    async close() {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
      await receiver.close();
    },
  };
}

async function readJson(req: IncomingMessage): Promise<Record<string, unknown> | undefined> {
  let text = '';
  for await (const chunk of req) {
    text += String(chunk);
    if (text.length > 65_536) return undefined;
  }
  try {
    const value: unknown = JSON.parse(text);
    return typeof value === 'object' && value !== null ? (value as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
}

function answer(res: ServerResponse, status: number, body: unknown) {
  if (res.headersSent || res.destroyed) return;
  res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const env = process.env;
  let gatewayUrl = env.GATEWAY_URL;
  let apiKey = env.GATEWAY_API_KEY ?? '';
  const demo = !gatewayUrl;
  if (demo) {
    const { startGateway } = await import('jobhook/testing');
    const gateway = await startGateway({
      jobs: { stepMs: 500 },
      deliveries: { dropRate: 0.5, retryDelaysMs: [] },
    });
    ({ baseUrl: gatewayUrl, apiKey } = gateway);
    console.log(`Gateway simulator at ${gatewayUrl}, losing half the deliveries`);
  }
  let shared: Pick<ReconcileExampleOptions, 'jobs' | 'dedupe'> = {};
  if (env.REDIS_URL) {
    const { Redis } = await import('ioredis');
    const { redisDedupeStore, redisJobTracker } = await import('jobhook/redis');
    const redis = new Redis(env.REDIS_URL);
    shared = { jobs: redisJobTracker({ redis }), dedupe: redisDedupeStore({ redis }) };
  } else if (!demo) {
    const { sqliteDedupeStore, sqliteJobTracker } = await import('jobhook/sqlite');
    const path = './jobhook.db';
    shared = { jobs: sqliteJobTracker({ path }), dedupe: sqliteDedupeStore({ path }) };
  }
  const app = await start({
    gatewayUrl: gatewayUrl!,
    apiKey,
    secret: env.WEBHOOK_SECRET ?? 'whsec_ZGVtby1zZWNyZXQtZm9yLXRoZS1leGFtcGxlLWFwcA==',
    port: Number(env.PORT ?? 3000),
    ...(env.PUBLIC_URL && { publicUrl: env.PUBLIC_URL }),
    ...shared,
    // The simulator's jobs end in about a second: look for lost outcomes sooner than in production.
    ...(demo && { afterMs: 3000, intervalMs: 1000 }),
  });
  console.log(`POST ${app.url}/jobs with {"prompt": "..."}; each outcome is printed once, webhook or poll`);
}
