/**
 * A process of bench/handoff.ts. ROLE=receiver: an HTTP receiver on PORT that hands each event off
 * to the BullMQ queue QUEUE (prints "listening"). ROLE=worker: runs the handler for queued events,
 * which counts them in Redis (prints "ready").
 */
import { once } from 'node:events';
import { createServer } from 'node:http';
import { Queue } from 'bullmq';
import { Redis } from 'ioredis';
import { createReceiver } from 'jobhook';
import { bullmqHandoff, runWorker } from 'jobhook/bullmq';
import { nodeHandler } from 'jobhook/node';

const { ROLE, REDIS_URL = '', QUEUE = '', PREFIX = '', SECRET = '', PORT = '0' } = process.env;
const connection = { url: REDIS_URL };

if (ROLE === 'receiver') {
  const queue = new Queue(QUEUE, { connection, prefix: PREFIX });
  const receiver = createReceiver({ secret: SECRET, handoff: bullmqHandoff({ queue }) });
  const server = createServer(nodeHandler(receiver));
  server.listen(Number(PORT), '127.0.0.1');
  await once(server, 'listening');
  console.log('listening');
} else {
  const redis = new Redis(REDIS_URL);
  const counter = `${PREFIX}:handled`;
  const receiver = createReceiver({ secret: SECRET }).onJobCompleted(() => redis.incr(counter));
  await runWorker(receiver, {
    connection,
    queueName: QUEUE,
    concurrency: 32,
    workerOptions: { prefix: PREFIX },
  });
  console.log('ready');
}
