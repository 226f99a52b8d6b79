// One worker process of the hand-off variant: the same app as the receivers (app.ts), run by
// `runWorker` on the queue they fill. Its side effect is a member `<pid>:<n>` of a Redis set per
// event, one per run of the handler: a command ioredis sends again after Redis restarted adds
// nothing, so only the handler's runs count. Prints "ready" once connected.
import { Redis } from 'ioredis';
import { runWorker } from 'jobhook/bullmq';
import { app } from './app.js';

const env = (name: string) => {
  const value = process.env[name];
  if (value === undefined) throw new Error(`worker.ts needs ${name}`);
  return value;
};

const redis = new Redis(env('REDIS_URL'));
redis.on('error', () => undefined);
const prefix = env('PREFIX');
let runs = 0;
const receiver = app({}, (eventId) => redis.sadd(`${prefix}effects:${eventId}`, `${process.pid}:${++runs}`));
const worker = await runWorker(receiver, {
  connection: { url: env('REDIS_URL') },
  queueName: env('QUEUE'),
  concurrency: 16,
  // Connection errors while Redis restarts are expected here; the test counts the outcome.
  onWorkerError: () => undefined,
});
console.log('ready');
process.once('SIGTERM', () => void worker.close().then(() => process.exit(0)));
