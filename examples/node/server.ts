/**
 * Receive the gateway's webhooks on Node's own HTTP server, next to the server's other routes.
 *
 *   WEBHOOK_SECRET=whsec_… npx tsx examples/node/server.ts
 */
import { once } from 'node:events';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { pathToFileURL } from 'node:url';
import { createReceiver } from 'jobhook';
import { nodeHandler } from 'jobhook/node';
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

  const webhooks = nodeHandler(receiver, { path: '/webhooks' });
  // Requests for other paths come back through `next`, where the server's own routes live.
  const server = createServer((req, res) =>
    webhooks(req, res, () => {
      if (req.method === 'GET' && req.url === '/health') {
        res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ ok: true }));
      } else {
        res.writeHead(404).end();
      }
    }),
  );

  server.listen(port, host);
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
