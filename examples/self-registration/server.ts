/**
 * An app that registers its own webhook on startup: listen first, then register, so the webhook
 * never points at a server that is not answering yet. Restarting it reuses the same webhook. A
 * failed registration (a wrong API key, say) is logged, and the server keeps answering.
 *
 *   GATEWAY_URL=https://… GATEWAY_API_KEY=… WEBHOOK_SECRET=whsec_… PUBLIC_URL=https://example.com \
 *     npx tsx examples/self-registration/server.ts
 *
 * Without GATEWAY_URL it starts the gateway simulator from `jobhook/testing` and submits one job,
 * so the whole loop runs on one machine.
 */
import { once } from 'node:events';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { pathToFileURL } from 'node:url';
import { createReceiver } from 'jobhook';
import { createClient } from 'jobhook/client';
import { nodeHandler } from 'jobhook/node';
import { sqliteDedupeStore } from 'jobhook/sqlite';

export interface SelfRegisteringOptions {
  /** The gateway's base URL and an API key for it. */
  gatewayUrl: string;
  apiKey: string;
  /** A stable secret from configuration: the same on every restart and every instance. */
  secret: string;
  port?: number;
  host?: string;
  /** Where the gateway reaches this app. Default: http://host:port, fine for a local gateway. */
  publicUrl?: string;
  log?: (line: string) => void;
  /** Where a failed registration is reported. Default: console.error. */
  logError?: (line: string) => void;
}

export async function start(options: SelfRegisteringOptions) {
  const { port = 3000, host = '127.0.0.1', secret, log = console.log, logError = console.error } = options;
  const receiver = createReceiver({ secret, dedupe: sqliteDedupeStore({ path: './jobhook.db' }) })
    .onJobCompleted((event) => log(`job ${event.data.task_id} completed: ${event.data.image_url}`))
    .onJobFailed((event) => log(`job ${event.data.task_id} failed: ${event.data.error.message}`));

  // 1. Start listening.
  const server = createServer(nodeHandler(receiver, { path: '/webhooks' }));
  server.listen(port, host);
  await once(server, 'listening');
  const { port: bound } = server.address() as AddressInfo;
  const url = `${options.publicUrl ?? `http://${host}:${bound}`}/webhooks`;
  log(`Receiving webhooks at ${url}`);

  // 2. Then register: creates the webhook, or reuses the one an earlier start made. Its failure
  // (a wrong API key, a gateway that stays down) is handled here, never left to reject unhandled:
  // that would stop the whole process, and every request it was serving, on a typo in the key.
  const client = createClient({ apiKey: options.apiKey, baseUrl: options.gatewayUrl });
  const registration = receiver.register({ client, url }).then(
    ({ webhook, created }) => {
      log(`${created ? 'Registered' : 'Reusing'} webhook ${webhook.id} for ${url}`);
      return webhook;
    },
    (error: unknown) => {
      const reason = error instanceof Error ? error.message : String(error);
      logError(`The webhook is not registered, so no delivery will arrive: ${reason}`);
      return undefined;
    },
  );

  return {
    url,
    client,
    /** The registered webhook, or undefined when registering failed (already logged). */
    registration,
    async close() {
      await registration;
      await new Promise((resolve) => server.close(resolve));
      await receiver.close(); // lets running handlers finish
    },
  };
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const env = process.env;
  if (env.GATEWAY_URL) {
    await start({
      gatewayUrl: env.GATEWAY_URL,
      apiKey: env.GATEWAY_API_KEY ?? '',
      secret: env.WEBHOOK_SECRET ?? '',
      port: Number(env.PORT ?? 3000),
      ...(env.PUBLIC_URL && { publicUrl: env.PUBLIC_URL }),
    });
  } else {
    // Demo: a local simulator, one job, then Ctrl-C.
    const { startGateway } = await import('jobhook/testing');
    const gateway = await startGateway();
    const app = await start({
      gatewayUrl: gateway.baseUrl,
      apiKey: gateway.apiKey,
      secret: env.WEBHOOK_SECRET ?? 'whsec_ZGVtby1zZWNyZXQtZm9yLXRoZS1leGFtcGxlLWFwcA==',
      port: Number(env.PORT ?? 3000),
    });
    await app.registration;
    const job = await app.client.images.generate({
      model: 'demo',
      prompt: 'a lighthouse at dusk',
      aspect_ratio: '16:9',
    });
    console.log(`Submitted job ${job.task_id} (${job.credits_used} credits, ${job.remaining_credits} left)`);
  }
}
