// BullMQ for the hand-off contract suite: a queue under a key prefix of this run's own.
import { Queue } from 'bullmq';
import { bullmqHandoff } from 'jobhook/bullmq';
import type { HandoffJob, QueuedJobRunner } from 'jobhook/extend';
import { freePort, REDIS_URL, redisAvailable, redisForTest } from '../support/services.js';
import type { EngineUnderTest } from './contract.js';

// Short locks, so that a job whose worker died is taken up again within a second or two.
const workerOptions = { lockDuration: 1000, stalledInterval: 500 };

export function workerFromEnv(receiver: QueuedJobRunner, env: NodeJS.ProcessEnv) {
  const queue = new Queue<HandoffJob>(env.QUEUE!, {
    connection: { url: env.REDIS_URL! },
    prefix: env.PREFIX!,
  });
  return bullmqHandoff({ queue }).work(receiver, { workerOptions, onWorkerError: () => undefined });
}

export const bullmq: EngineUnderTest = {
  name: 'BullMQ',
  available: redisAvailable,
  async open({ attempts }) {
    const service = redisForTest();
    const prefix = service.prefix.slice(0, -1); // BullMQ adds the ':' itself
    const queue = new Queue<HandoffJob>('jobhook', { connection: { url: REDIS_URL }, prefix });
    const jobOptions = { attempts, backoff: { type: 'fixed', delay: 10 } };
    const handoff = bullmqHandoff({ queue, jobOptions });
    const closing: (() => Promise<unknown>)[] = [() => queue.close(), () => service.cleanup()];
    return {
      handoff,
      async unreachable() {
        const port = await freePort(); // nobody listens: the client keeps reconnecting
        const dead = new Queue('jobhook', { connection: { host: '127.0.0.1', port }, prefix });
        dead.on('error', () => undefined);
        closing.unshift(() => dead.close().catch(() => undefined));
        return bullmqHandoff({ queue: dead, timeoutMs: 300 });
      },
      async stored() {
        const counts = await queue.getJobCounts();
        return Object.values(counts).reduce((sum, n) => sum + n, 0);
      },
      async pending() {
        const counts = await queue.getJobCounts('waiting', 'active', 'delayed', 'prioritized');
        return Object.values(counts).reduce((sum, n) => sum + n, 0);
      },
      startWorker: (receiver) => handoff.work(receiver, { workerOptions }),
      workerEnv: { ENGINE: 'bullmq', REDIS_URL, QUEUE: 'jobhook', PREFIX: prefix },
      cliArgs: ['--redis-url', REDIS_URL, '--prefix', prefix],
      async cleanup() {
        for (const close of closing) await close();
      },
    };
  },
};
