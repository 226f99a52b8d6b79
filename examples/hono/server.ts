/**
 * Receive the gateway's webhooks in a Hono app on Node (@hono/node-server), next to its own routes.
 * On Bun, Deno or Workers, export `app` instead of calling `serve`.
 *
 *   WEBHOOK_SECRET=whsec_… npx tsx examples/hono/server.ts
 */
import { once } from 'node:events';
import type { AddressInfo } from 'node:net';
import { pathToFileURL } from 'node:url';
import { serve } from '@hono/node-server';
import { Hono } from 'hono';
import { createReceiver } from 'jobhook';
import { honoHandler } from 'jobhook/hono';
import { sqliteDedupeStore } from 'jobhook/sqlite';

export interface ExampleOptions {
  port?: number;
  host?: string;
  secret: string;
  log?: (line: string) => void;
}

export async function start({ port = 3000, host = '127.0.0.1', secret, log = console.log }: ExampleOptions) {
  const receiver = createReceiver({ secret, dedupe: sqliteDedupeStore({ path: './jobhook.db' }) })
    .onJobCompleted((event) => log(`job ${event.data.task_id} completed: ${event.data.image_url}`))
    .onJobFailed((event) => log(`job ${event.data.task_id} failed: ${event.data.error.message}`));

  const app = new Hono();
  app.post('/webhooks', honoHandler(receiver));
  app.post('/jobs', async (c) => c.json({ queued: (await c.req.json<{ prompt?: string }>()).prompt }, 202));

  const server = serve({ fetch: app.fetch, port, hostname: host });
  await once(server, 'listening');
  const { port: bound } = server.address() as AddressInfo;
  return {
    url: `http://${host}:${bound}`,
    async close() {
      await new Promise((resolve) => server.close(resolve));
      await receiver.close(); // lets running handlers finish
    },
  };
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const { url } = await start({
    port: Number(process.env.PORT ?? 3000),
    secret: process.env.WEBHOOK_SECRET ?? '',
  });
  console.log(`Receiving webhooks at ${url}/webhooks`);
}
