/**
 * Receive the gateway's webhooks in an Express app, next to the app's own JSON routes.
 *
 *   WEBHOOK_SECRET=whsec_… npx tsx examples/express/server.ts
 */
import { once } from 'node:events';
import type { AddressInfo } from 'node:net';
import { pathToFileURL } from 'node:url';
import express from 'express';
import { createReceiver } from 'jobhook';
import { expressHandler } from 'jobhook/express';
import { sqliteDedupeStore } from 'jobhook/sqlite';

export interface ExampleOptions {
  port?: number;
  host?: string;
  secret: string;
  log?: (line: string) => void;
}

export async function start({ port = 3000, host = '127.0.0.1', secret, log = console.log }: ExampleOptions) {
  // What was handled is kept in a file beside the app, so a retry after a restart runs nothing twice.
  const receiver = createReceiver({ secret, dedupe: sqliteDedupeStore({ path: './jobhook.db' }) })
    .onJobCompleted((event) => log(`job ${event.data.task_id} completed: ${event.data.image_url}`))
    .onJobFailed((event) => log(`job ${event.data.task_id} failed: ${event.data.error.message}`));

  const app = express();
  // Before express.json(): the signature covers the raw bytes, which a parser would consume.
  app.post('/webhooks', expressHandler(receiver));
  app.use(express.json());
  app.post(
    '/jobs',
    (req, res) => void res.status(202).json({ queued: (req.body as { prompt?: string }).prompt }),
  );

  const server = app.listen(port, host);
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
