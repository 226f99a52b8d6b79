// Every public function that takes options refuses a key it does not know (issue 24: in JavaScript
// a misplaced option used to be ignored silently), before it touches anything it was given.
import {
  createReceiver,
  hmacSha256,
  memoryDedupeStore,
  memoryJobTracker,
  standardWebhooks,
  stripeSignature,
} from 'jobhook';
import { bullmqHandoff, runWorker } from 'jobhook/bullmq';
import { fastifyPlugin } from 'jobhook/fastify';
import { koaHandler } from 'jobhook/koa';
import { natsHandoff, runNatsWorker } from 'jobhook/nats';
import { nodeHandler } from 'jobhook/node';
import { otelObserver } from 'jobhook/otel';
import { pgBossHandoff, runPgBossWorker } from 'jobhook/pg-boss';
import { postgresDedupeStore, postgresJobTracker } from 'jobhook/postgres';
import { sqliteDedupeStore, sqliteJobTracker } from 'jobhook/sqlite';
import { redisDedupeStore, redisJobTracker, redisResultChannel } from 'jobhook/redis';
import { signDelivery } from 'jobhook/testing';
import { expect, test } from 'vitest';
import { SECRET } from '../fixtures.js';

const receiver = createReceiver({ secret: SECRET });
const anything = {} as never;
// Stand-ins with the methods each hand-off checks for: no call reaches them.
const queue = { name: 'q', add() {} } as never;
const boss = { send() {}, getJobById() {} } as never;
const js = { publish() {}, jetstreamManager() {} } as never;

const calls: [string, (options: never) => unknown][] = [
  ['memoryDedupeStore', (o) => memoryDedupeStore(o)],
  ['memoryJobTracker', (o) => memoryJobTracker(o)],
  ['redisDedupeStore', (o) => redisDedupeStore(o)],
  ['redisResultChannel', (o) => redisResultChannel(o)],
  ['redisJobTracker', (o) => redisJobTracker(o)],
  ['postgresDedupeStore', (o) => postgresDedupeStore(o)],
  ['postgresJobTracker', (o) => postgresJobTracker(o)],
  ['sqliteDedupeStore', (o) => sqliteDedupeStore(o)],
  ['sqliteJobTracker', (o) => sqliteJobTracker(o)],
  ['otelObserver', (o) => otelObserver(o)],
  ['hmacSha256', (o) => hmacSha256(o)],
  ['standardWebhooks', (o) => standardWebhooks(o)],
  ['stripeSignature', (o) => stripeSignature(o)],
  ['signDelivery', (o) => signDelivery(o)],
  ['nodeHandler', (o) => nodeHandler(receiver, o)],
  ['koaHandler', (o) => koaHandler(receiver, o)],
  ['fastifyPlugin', (o) => fastifyPlugin(receiver, o)],
  ['bullmqHandoff', (o) => bullmqHandoff(o)],
  ['pgBossHandoff', (o) => pgBossHandoff(o)],
  ['natsHandoff', (o) => natsHandoff(o)],
  ['bullmqHandoff.work', (o) => bullmqHandoff({ queue }).work(receiver, o)],
  ['pgBossHandoff.work', (o) => pgBossHandoff({ boss }).work(receiver, o)],
  ['natsHandoff.work', (o) => natsHandoff({ js }).work(receiver, o)],
  ['runWorker', (o) => runWorker(receiver, o)],
  ['runPgBossWorker', (o) => runPgBossWorker(receiver, o)],
  ['runNatsWorker', (o) => runNatsWorker(receiver, o)],
];

test.each(calls)('%s refuses an option key it does not know, naming it', async (name, call) => {
  let thrown: unknown;
  try {
    await call({ ...(anything as object), notAnOption: 1 } as never);
  } catch (error) {
    thrown = error;
  }
  expect(thrown).toMatchObject({
    name: 'JobhookError',
    code: 'invalid_options',
    message: expect.stringContaining(`${name} has no option \`notAnOption\``) as string,
  });
});

test('a typo is answered with the option it resembles', () => {
  expect(() => redisDedupeStore({ redis: anything, ttl: 5 } as never)).toThrow(/did you mean `ttlMs`\?/);
  expect(() => nodeHandler(receiver, { Path: '/webhooks' } as never)).toThrow(/did you mean `path`\?/);
});
