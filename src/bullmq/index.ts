/**
 * Verify, then enqueue: a receiver that answers the gateway as soon as the event is durably in a
 * BullMQ queue, and workers that run its handlers with BullMQ's retries.
 *
 *   import { Queue } from 'bullmq';
 *   import { createReceiver } from 'jobhook';
 *   import { bullmqHandoff } from 'jobhook/bullmq';
 *
 *   const connection = { host: '127.0.0.1', port: 6379 };
 *   const receiver = createReceiver({
 *     secret,
 *     handoff: bullmqHandoff({ queue: new Queue('jobhook', { connection }) }),
 *   }).onJobCompleted(async (event) => saveImage(event.data.image_url));
 *
 *   // in the web process: mount `receiver` with an adapter; in the worker process:
 *   const worker = await receiver.work({ concurrency: 8 }); // the queue, its connection and prefix
 *
 * `bullmq` is an optional peer dependency: install it yourself. This module loads it only when a
 * worker starts.
 *
 * @module jobhook/bullmq
 */
export { bullmqHandoff, type BullmqHandoff, type BullmqHandoffOptions } from './handoff.js';
export type { WorkOptions, WorkerHandle } from './worker.js';
export { runWorker } from './run-worker.js';
export { jobIdOf } from './handoff.js';
