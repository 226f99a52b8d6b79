/**
 * Verify, then enqueue, on NATS JetStream: a receiver that answers the gateway once the stream
 * acknowledged the event, and workers that run its handlers from a durable consumer.
 *
 *   import { connect } from '@nats-io/transport-node';
 *   import { jetstream } from '@nats-io/jetstream';
 *   import { createReceiver } from 'jobhook';
 *   import { natsHandoff } from 'jobhook/nats';
 *
 *   const js = jetstream(await connect({ servers: '127.0.0.1:4222' }));
 *   const receiver = createReceiver({ secret, handoff: natsHandoff({ js }) })
 *     .onJobCompleted(async (event) => saveImage(event.data.image_url));
 *
 *   // in the web process: mount `receiver` with an adapter; in the worker process:
 *   const worker = await receiver.work({ concurrency: 8 }); // the hand-off's stream and consumer
 *
 * `@nats-io/transport-node` and `@nats-io/jetstream` (version 3) are optional peer dependencies:
 * install them yourself. This module loads neither when it loads (you pass the client);
 * `retryFailed` imports `@nats-io/transport-node` for its headers.
 *
 * @module jobhook/nats
 */
export { natsHandoff, type NatsHandoff, type NatsHandoffOptions } from './handoff.js';
export type { WorkOptions, WorkerHandle } from './worker.js';
export { runNatsWorker, type RunNatsWorkerOptions, type NatsWorkerHandle } from './run-worker.js';
export { DEFAULT_BACKOFF_MS } from './worker.js';
export type { Handoff, HandoffJob, QueuedJobRunner, QueuedAttempt } from '../handoff/handoff.js';
export type { FailedEvent, FailedEvents } from '../handoff/handoff.js';
