// A worker of the contract suite's engine in a process of its own, to be SIGKILLed mid-job: its
// job.completed handler prints "started <event id> attempt <context.attempt>" and never
// finishes. ENGINE names the engine (test/handoff/<engine>-engine.ts); the rest of the environment
// is what that engine's `workerEnv` gave. Prints "ready" once its worker is connected.
import { createReceiver } from 'jobhook';
import type { QueuedJobRunner } from 'jobhook/extend';
import { SECRET } from '../support/deliveries.js';

const engine = process.env.ENGINE;
if (!engine || !/^[a-z-]+$/.test(engine)) throw new Error('worker-process.ts needs ENGINE');
const { workerFromEnv } = (await import(`./${engine}-engine.js`)) as {
  workerFromEnv: (receiver: QueuedJobRunner, env: NodeJS.ProcessEnv) => Promise<unknown>;
};
const receiver = createReceiver({ secret: SECRET, handlerTimeoutMs: 600_000 }).onJobCompleted(
  (event, context) => {
    console.log(`started ${event.id} attempt ${context.attempt}`);
    return new Promise(() => undefined);
  },
);
await workerFromEnv(receiver, process.env);
console.log('ready');
