/**
 * Verify, then enqueue, on NATS JetStream: the web process answers the gateway once the stream
 * acknowledged the event; workers run the handlers from a durable consumer. One file, two roles:
 *
 *   WEBHOOK_SECRET=whsec_… NATS_URL=nats://127.0.0.1:4222 npx tsx examples/nats-handoff/app.ts
 *   WEBHOOK_SECRET=whsec_… NATS_URL=nats://127.0.0.1:4222 npx tsx examples/nats-handoff/app.ts worker
 *
 * Events whose handlers kept failing: `npx jobhook failed list --nats-url "$NATS_URL"`, then
 * `npx jobhook failed retry <id>` (or `--all`).
 */
import { once } from 'node:events';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { pathToFileURL } from 'node:url';
import { jetstream } from '@nats-io/jetstream';
import { connect } from '@nats-io/transport-node';
import { createReceiver, type ReceiverOptions } from 'jobhook';
import { nodeHandler } from 'jobhook/node';
import { natsHandoff } from 'jobhook/nats';

export interface NatsAppOptions {
  natsUrl: string;
  secret: string;
  /** The stream and subject. Default `JOBHOOK` and `jobhook.events`. */
  stream?: string;
  subject?: string;
  log?: (line: string) => void;
}

/** The receiver with its handlers: the same in the web process and in the workers. */
function appReceiver(secret: string, options: Omit<ReceiverOptions, 'secret'>, log: (line: string) => void) {
  return createReceiver({ ...options, secret })
    .onJobCompleted((event) => log(`job ${event.data.task_id} completed: ${event.data.image_url}`))
    .onJobFailed((event) => log(`job ${event.data.task_id} failed: ${event.data.error.message}`));
}

/** The web process: receives deliveries at /webhooks and publishes each verified event. */
export async function startServer(options: NatsAppOptions & { port?: number }) {
  // Reconnects for as long as it takes (the client's default gives up after 10 tries, ~20 s).
  const nc = await connect({ servers: options.natsUrl, maxReconnectAttempts: -1 });
  const { stream, subject } = options;
  // The stream is created on first use, deduplicating over 72 hours (`duplicateWindowMs`).
  const handoff = natsHandoff({ js: jetstream(nc), stream, subject });
  const receiver = appReceiver(options.secret, { handoff }, () => undefined);
  const server = createServer(nodeHandler(receiver, { path: '/webhooks' }));
  server.listen(options.port ?? 3000, '127.0.0.1');
  await once(server, 'listening');
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/webhooks`,
    async close() {
      await new Promise((resolve) => server.close(resolve));
      await receiver.close();
      await nc.drain();
    },
  };
}

/** A worker process: runs the handlers for the published events. */
export async function startWorker(options: NatsAppOptions) {
  const nc = await connect({ servers: options.natsUrl, maxReconnectAttempts: -1 });
  const { stream, subject } = options;
  // The same hand-off as the web process's: the worker consumes its stream, subject and consumer.
  const handoff = natsHandoff({ js: jetstream(nc), stream, subject });
  const receiver = appReceiver(options.secret, { handoff }, options.log ?? console.log);
  const worker = await handoff.work(receiver);
  return {
    async close() {
      await worker.close();
      await nc.drain();
    },
  };
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const { WEBHOOK_SECRET: secret, NATS_URL: natsUrl } = process.env;
  if (!secret || !natsUrl) {
    console.error('Set WEBHOOK_SECRET and NATS_URL.');
    process.exit(1);
  }
  if (process.argv[2] === 'worker') {
    const worker = await startWorker({ natsUrl, secret });
    console.log('Running the handlers of queued webhook events');
    process.once('SIGTERM', () => void worker.close());
  } else {
    const app = await startServer({ natsUrl, secret, port: Number(process.env.PORT ?? 3000) });
    console.log(`Receiving webhooks at ${app.url}`);
    process.once('SIGTERM', () => void app.close());
  }
}
