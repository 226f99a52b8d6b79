/**
 * A worker for the instances that hand events off to BullMQ (server.ts with BULLMQ=1): it runs
 * the same receiver's handlers for each queued event, with BullMQ's retries. Start as many as the
 * work needs, on the same Redis:
 *
 *   WEBHOOK_SECRET=whsec_… REDIS_URL=redis://127.0.0.1:6379 npx tsx examples/many-instances/worker.ts
 *
 * A job whose handlers keep failing ends in the queue's failed set with its event; retry it with
 * `(await queue.getJob(jobIdOf(eventId)))?.retry()` or `queue.retryJobs({ state: 'failed' })`.
 */
import { pathToFileURL } from 'node:url';
import { Queue } from 'bullmq';
import { bullmqHandoff } from 'jobhook/bullmq';
import { appReceiver, type QueueSettings } from './server.js';

export interface WorkerOptions {
  secret: string;
  queue: QueueSettings;
  concurrency?: number;
  log?: (line: string) => void;
}

export async function startWorker({ secret, queue, concurrency = 8, log = console.log }: WorkerOptions) {
  // The same hand-off as the web instances': the worker consumes its queue, connection and prefix.
  const { redisUrl, name = 'jobhook', prefix } = queue;
  const bullQueue = new Queue(name, { connection: { url: redisUrl }, ...(prefix && { prefix }) });
  const handoff = bullmqHandoff({ queue: bullQueue });
  const receiver = appReceiver(secret, { handoff }, log);
  const worker = await handoff.work(receiver, { concurrency });
  return {
    worker: worker.worker,
    async close() {
      await worker.close();
      await bullQueue.close();
    },
  };
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const secret = process.env.WEBHOOK_SECRET;
  const redisUrl = process.env.REDIS_URL;
  if (!secret || !redisUrl) {
    console.error('Set WEBHOOK_SECRET and REDIS_URL.');
    process.exit(1);
  }
  const worker = await startWorker({ secret, queue: { redisUrl } });
  console.log('Running the handlers of queued webhook events');
  process.once('SIGTERM', () => void worker.close());
}
