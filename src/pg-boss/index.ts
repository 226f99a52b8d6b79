/**
 * Verify, then enqueue, on PostgreSQL: a receiver that answers the gateway as soon as the event is
 * a pg-boss job, and workers that run its handlers with pg-boss's retries.
 *
 *   import PgBoss from 'pg-boss';
 *   import { createReceiver } from 'jobhook';
 *   import { pgBossHandoff } from 'jobhook/pg-boss';
 *
 *   const boss = new PgBoss(process.env.DATABASE_URL);
 *   await boss.start();
 *   const receiver = createReceiver({ secret, handoff: pgBossHandoff({ boss }) })
 *     .onJobCompleted(async (event) => saveImage(event.data.image_url));
 *
 *   // in the web process: mount `receiver` with an adapter; in the worker process:
 *   const worker = await receiver.work({ concurrency: 8 }); // the boss's schema, the hand-off's queue
 *
 * `pg-boss` (version 10) is an optional peer dependency: install it yourself. This module never
 * loads it: you pass the instance.
 *
 * @module jobhook/pg-boss
 */
export { pgBossHandoff, type PgBossHandoff, type PgBossHandoffOptions } from './handoff.js';
export type { WorkOptions, WorkerHandle } from './worker.js';
export { runPgBossWorker } from './run-worker.js';
export { jobIdOf } from './handoff.js';
