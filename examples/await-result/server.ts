/**
 * An endpoint that submits an image job and answers with its image: `POST /images` with
 * `{ "prompt": "…" }` answers `{ task_id, image_url }` once the job has ended. The result comes
 * from the webhook this app receives (or, with a shared results channel, one another instance
 * received); polling the gateway is the safety net when the webhook is lost.
 *
 *   GATEWAY_URL=https://… GATEWAY_API_KEY=… WEBHOOK_SECRET=whsec_… PUBLIC_URL=https://example.com \
 *     npx tsx examples/await-result/server.ts
 *   curl -X POST localhost:3000/images -H 'content-type: application/json' -d '{"prompt":"a fox"}'
 *
 * Without GATEWAY_URL it starts the gateway simulator from `jobhook/testing`. Several instances
 * behind one URL share results with `results: redisResultChannel({ redis })` from `jobhook/redis`.
 */
import { once } from 'node:events';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { pathToFileURL } from 'node:url';
import { createReceiver } from 'jobhook';
import type { ResultChannel } from 'jobhook/extend';
import {
  createClient,
  GatewayError,
  JobFailedError,
  WaitTimeoutError,
  type GatewayClient,
} from 'jobhook/client';
import { nodeHandler } from 'jobhook/node';

export interface AwaitResultOptions {
  /** The gateway's base URL and an API key for it. */
  gatewayUrl: string;
  apiKey: string;
  /** A stable secret from configuration: the same on every restart and every instance. */
  secret: string;
  port?: number;
  host?: string;
  /** Where the gateway reaches this app. Default: http://host:port, fine for a local gateway. */
  publicUrl?: string;
  /** Register the webhook on startup. Default true; one of several instances behind a URL may skip it. */
  register?: boolean;
  /** Shares results between instances, e.g. `redisResultChannel({ redis })`. */
  results?: ResultChannel;
  /** How long a request waits for its job, in ms. Default 60,000. */
  timeoutMs?: number;
  /** First interval of the safety-net polling, in ms. Default 5,000. */
  pollIntervalMs?: number;
  model?: string;
  /** A client to use instead of one made from `gatewayUrl` and `apiKey`. */
  client?: GatewayClient;
}

export async function start(options: AwaitResultOptions) {
  const { port = 3000, host = '127.0.0.1', secret, model = 'default' } = options;
  const receiver = createReceiver({ secret, ...(options.results && { results: options.results }) });
  const client = options.client ?? createClient({ apiKey: options.apiKey, baseUrl: options.gatewayUrl });
  // One controller per waiting request: aborted when its caller hangs up, or when the app stops.
  const waiting = new Set<AbortController>();

  async function generate(req: IncomingMessage, res: ServerResponse) {
    const input = await readJson(req);
    const prompt = typeof input?.prompt === 'string' ? input.prompt : undefined;
    if (!prompt)
      return answer(res, 400, { error: { code: 'invalid_request', message: 'Send {"prompt": "…"}.' } });
    const controller = new AbortController();
    const hungUp = () => controller.abort(new Error('The caller hung up.'));
    res.once('close', hungUp);
    waiting.add(controller);
    try {
      const task = await client.images.generateAndWait(
        {
          model,
          prompt,
          ...(typeof input?.aspect_ratio === 'string' && { aspect_ratio: input.aspect_ratio }),
        },
        {
          receiver,
          signal: controller.signal,
          timeoutMs: options.timeoutMs ?? 60_000,
          pollIntervalMs: options.pollIntervalMs ?? 5_000,
        },
      );
      answer(res, 200, { task_id: task.task_id, image_url: task.image_url });
    } catch (error) {
      if (controller.signal.aborted) return void res.destroy();
      if (error instanceof JobFailedError) {
        answer(res, 502, { task_id: error.taskId, error: { code: error.code, message: error.message } });
      } else if (error instanceof WaitTimeoutError) {
        // The job goes on: the caller may come back for it (GET /images/:task_id, not shown).
        answer(res, 504, { task_id: error.taskId, error: { code: error.code, message: error.message } });
      } else if (error instanceof GatewayError) {
        answer(res, 502, { error: { code: error.code, message: 'The gateway refused the job.' } });
      } else {
        throw error;
      }
    } finally {
      res.off('close', hungUp);
      waiting.delete(controller);
    }
  }

  const webhooks = nodeHandler(receiver, { path: '/webhooks' });
  const server = createServer((req, res) =>
    webhooks(req, res, () => {
      if (req.method === 'POST' && req.url === '/images') {
        generate(req, res).catch(() => answer(res, 500, { error: { code: 'internal_error' } }));
      } else {
        res.writeHead(404).end();
      }
    }),
  );
  server.listen(port, host);
  await once(server, 'listening');
  const { port: bound } = server.address() as AddressInfo;
  const url = `http://${host}:${bound}`;
  const webhookUrl = `${options.publicUrl ?? url}/webhooks`;
  if (options.register !== false) {
    try {
      await receiver.register({ client, url: webhookUrl });
    } catch (error) {
      server.close();
      throw error;
    }
  }

  return {
    url,
    webhookUrl,
    receiver,
    client,
    /** Requests waiting for their job right now. */
    get waiting() {
      return waiting.size;
    },
    async close() {
      for (const controller of waiting) controller.abort(new Error('The app is stopping.'));
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
      await receiver.close();
    },
  };
}

/** The request's JSON body (at most 64 KiB), or undefined. */
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
  if (!gatewayUrl) {
    const { startGateway } = await import('jobhook/testing');
    const gateway = await startGateway({ jobs: { stepMs: 200 } });
    ({ baseUrl: gatewayUrl, apiKey } = gateway);
    console.log(`Gateway simulator at ${gatewayUrl}`);
  }
  const app = await start({
    gatewayUrl,
    apiKey,
    secret: env.WEBHOOK_SECRET ?? 'whsec_ZGVtby1zZWNyZXQtZm9yLXRoZS1leGFtcGxlLWFwcA==',
    port: Number(env.PORT ?? 3000),
    ...(env.PUBLIC_URL && { publicUrl: env.PUBLIC_URL }),
  });
  console.log(`POST ${app.url}/images with {"prompt": "..."} answers with the image URL`);
}
