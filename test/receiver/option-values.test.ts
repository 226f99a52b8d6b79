// Every public function that takes options refuses a bad value of each option it checks, in one
// message form (issue 21): "<where>: `<name>` must be <rule>; got <kind>." It names the function and
// the option, and the kind of what was given, never the value: a value can be a secret. Nothing here
// reaches a service; each call throws (or rejects) while checking its options.
import {
  createReceiver,
  hmacSha256,
  memoryDedupeStore,
  memoryJobTracker,
  standardWebhooks,
  stripeSignature,
} from 'jobhook';
import { bullmqHandoff, runWorker } from 'jobhook/bullmq';
import { createClient, registerWebhook } from 'jobhook/client';
import { natsHandoff, runNatsWorker } from 'jobhook/nats';
import { pgBossHandoff, runPgBossWorker } from 'jobhook/pg-boss';
import { postgresDedupeStore, postgresJobTracker } from 'jobhook/postgres';
import { redisDedupeStore, redisJobTracker, redisResultChannel } from 'jobhook/redis';
import { signDelivery, startGateway } from 'jobhook/testing';
import { expect, test } from 'vitest';
import { SECRET } from '../fixtures.js';

/** A string no name, URL, encoding or number rule accepts, and that must never be shown. */
const TEXT = 's3cr3t-VALUE .*';
/** A number no numeric rule accepts; its digits must never be shown either. */
const NUMBER = -7.25;

const receiver = createReceiver({ secret: SECRET });
/** The call must fail before any request: this fetch fails the test if it is reached. */
const unreachable: typeof fetch = () => Promise.reject(new Error('no request should be made'));
const client = createClient({ apiKey: 'sk_test_options', baseUrl: 'https://gw.example', fetch: unreachable });
const jobs = memoryJobTracker();
// Stand-ins with the methods each function checks for: no call reaches them.
const redis = { evalsha() {}, eval() {}, publish() {}, duplicate() {} } as never;
const pool = { query() {} } as never;
const queue = { name: 'q', add() {}, getFailed() {}, getJob() {} } as never;
const boss = { send() {}, getJobById() {}, fetch() {}, complete() {} } as never;
const js = { publish() {}, jetstreamManager() {} } as never;
const connection = { host: '127.0.0.1', port: 6379 };

type Call = (value: unknown) => unknown;
/** [function as named in the message, option as named there, the call given a value, values to try] */
type Row = [string, string, Call, (readonly unknown[])?];
const NUMBER_ONLY = [NUMBER];

const any = (options: object) => options as never;
const receiverWith = (options: object) => createReceiver(any({ secret: SECRET, ...options }));
const reconcileWith = (options: object) => receiverWith({ reconcile: { client, jobs, ...options } });

/** What startGateway's option groups need besides the field under test. */
const GROUP_BASE: Record<string, object> = {
  rateLimit: { requests: 10, windowMs: 1000 },
  lists: { pageSize: 10 },
  jobs: {},
  deliveries: {},
};

const rows: Row[] = [
  ['createReceiver', 'toleranceSeconds', (v) => receiverWith({ toleranceSeconds: v })],
  ['createReceiver', 'maxBodyBytes', (v) => receiverWith({ maxBodyBytes: v })],
  ['createReceiver', 'bodyTimeoutMs', (v) => receiverWith({ bodyTimeoutMs: v })],
  ['createReceiver', 'handlerTimeoutMs', (v) => receiverWith({ handlerTimeoutMs: v })],
  ['createReceiver', 'senderTimeoutMs', (v) => receiverWith({ senderTimeoutMs: v })],
  ['createReceiver', 'dedupeKey', (v) => receiverWith({ dedupeKey: v })],
  ['createReceiver', 'verifier', (v) => receiverWith({ verifier: v })],
  ['createReceiver', 'handoff', (v) => receiverWith({ handoff: v })],
  ['createReceiver', 'observer', (v) => receiverWith({ observer: v })],
  ['createReceiver', 'secret', (v) => createReceiver(any({ secret: v })), NUMBER_ONLY],
  // A whsec_ secret that is not base64 after its prefix: the secret itself must not be shown.
  ['createReceiver', 'secret', (v) => createReceiver(any({ secret: `whsec_${String(v)}` })), [TEXT]],
  ['createReceiver', 'results.maxEntries', (v) => receiverWith({ results: { maxEntries: v } })],
  ['createReceiver', 'results.maxAgeMs', (v) => receiverWith({ results: { maxAgeMs: v } })],
  ['createReceiver', 'reconcile', (v) => receiverWith({ reconcile: v })],
  ['createReceiver', 'reconcile.client', (v) => reconcileWith({ client: v })],
  ['createReceiver', 'reconcile.jobs', (v) => reconcileWith({ jobs: v })],
  ['createReceiver', 'reconcile.afterMs', (v) => reconcileWith({ afterMs: v })],
  ['createReceiver', 'reconcile.intervalMs', (v) => reconcileWith({ intervalMs: v })],
  ['createReceiver', 'reconcile.concurrency', (v) => reconcileWith({ concurrency: v })],
  ['createReceiver', 'reconcile.maxPollsPerPass', (v) => reconcileWith({ maxPollsPerPass: v })],
  ['createReceiver', 'reconcile.webhookUrl', (v) => reconcileWith({ webhookUrl: v }), NUMBER_ONLY],
  ['receiver.onJobCompleted', 'handler', (v) => receiver.onJobCompleted(v as never)],
  ['receiver.onJobFailed', 'handler', (v) => receiver.onJobFailed(v as never)],
  ['receiver.on', 'handler', (v) => receiver.on('job.completed', v as never)],
  ['receiver.onAny', 'handler', (v) => receiver.onAny(v as never)],
  ['receiver.onError', 'handler', (v) => receiver.onError(v as never)],
  ['receiver.close', 'timeoutMs', (v) => createReceiver({ secret: SECRET }).close(any({ timeoutMs: v }))],

  ['createClient', 'apiKey', (v) => createClient(any({ apiKey: v, baseUrl: 'https://gw.example' }))],
  ['createClient', 'baseUrl', (v) => createClient(any({ apiKey: 'sk_test', baseUrl: v }))],
  ...(
    [
      'fetch',
      'timeoutMs',
      'maxResponseBytes',
      'retries',
      'jobs',
      'retries.limit',
      'retries.methods',
      'retries.baseDelayMs',
      'retries.maxDelayMs',
      'retries.sleep',
    ] as const
  ).map((name): Row => {
    const [option, field] = name.split('.') as [string, string | undefined];
    return [
      'createClient',
      name,
      (v) =>
        createClient(
          any({ apiKey: 'sk_test', baseUrl: 'https://gw.example', [option]: field ? { [field]: v } : v }),
        ),
    ];
  }),
  [
    "a client call's options (the last argument)",
    'timeoutMs',
    (v) => client.account.balances(any({ timeoutMs: v })),
  ],
  ['waitFor', 'taskId', (v) => client.images.waitFor(v as never), NUMBER_ONLY],
  ['waitFor', 'timeoutMs', (v) => client.images.waitFor('task_1', any({ timeoutMs: v }))],
  ['waitFor', 'pollIntervalMs', (v) => client.images.waitFor('task_1', any({ pollIntervalMs: v }))],
  ['waitFor', 'maxPollIntervalMs', (v) => client.images.waitFor('task_1', any({ maxPollIntervalMs: v }))],
  ['waitFor', 'receiver', (v) => client.images.waitFor('task_1', any({ receiver: v }))],
  ...(
    [
      ['url', (v: unknown) => ({ url: v })],
      ['events', (v: unknown) => ({ events: v })],
      ['onWarning', (v: unknown) => ({ onWarning: v })],
      ['startupRetries', (v: unknown) => ({ startupRetries: v })],
      ['startupRetries.limit', (v: unknown) => ({ startupRetries: { limit: v } })],
      ['startupRetries.onRetry', (v: unknown) => ({ startupRetries: { onRetry: v } })],
    ] as const
  ).map(([name, options]): Row => [
    'register',
    name,
    (v) =>
      registerWebhook(
        client,
        any({ url: 'https://app.test/hook', events: ['job.completed'], ...options(v) }),
      ),
  ]),

  ['memoryDedupeStore', 'maxEntries', (v) => memoryDedupeStore(any({ maxEntries: v }))],
  ['memoryDedupeStore', 'ttlMs', (v) => memoryDedupeStore(any({ ttlMs: v }))],
  ['memoryDedupeStore', 'leaseMs', (v) => memoryDedupeStore(any({ leaseMs: v }))],
  ['memoryDedupeStore', 'now', (v) => memoryDedupeStore(any({ now: v }))],
  ['memoryJobTracker', 'leaseMs', (v) => memoryJobTracker(any({ leaseMs: v }))],
  ['memoryJobTracker', 'maxAgeMs', (v) => memoryJobTracker(any({ maxAgeMs: v }))],

  ['redisDedupeStore', 'redis', (v) => redisDedupeStore(any({ redis: v }))],
  ...(['leaseMs', 'ttlMs', 'timeoutMs'] as const).map((name): Row => [
    'redisDedupeStore',
    name,
    (v) => redisDedupeStore(any({ redis, [name]: v })),
  ]),
  ['redisJobTracker', 'redis', (v) => redisJobTracker(any({ redis: v }))],
  ...(['leaseMs', 'maxAgeMs', 'timeoutMs'] as const).map((name): Row => [
    'redisJobTracker',
    name,
    (v) => redisJobTracker(any({ redis, [name]: v })),
  ]),
  ['redisResultChannel', 'redis', (v) => redisResultChannel(any({ redis: v }))],

  ['postgresDedupeStore', 'pool', (v) => postgresDedupeStore(any({ pool: v }))],
  ...(['table', 'leaseMs', 'ttlMs', 'cleanupIntervalMs', 'timeoutMs'] as const).map((name): Row => [
    'postgresDedupeStore',
    name,
    (v) => postgresDedupeStore(any({ pool, [name]: v })),
  ]),
  ['postgresJobTracker', 'pool', (v) => postgresJobTracker(any({ pool: v }))],
  ...(['table', 'leaseMs', 'maxAgeMs', 'timeoutMs'] as const).map((name): Row => [
    'postgresJobTracker',
    name,
    (v) => postgresJobTracker(any({ pool, [name]: v })),
  ]),

  ['bullmqHandoff', 'queue', (v) => bullmqHandoff(any({ queue: v }))],
  ['bullmqHandoff', 'retentionMs', (v) => bullmqHandoff(any({ queue, retentionMs: v }))],
  ['bullmqHandoff', 'timeoutMs', (v) => bullmqHandoff(any({ queue, timeoutMs: v }))],
  ['bullmqHandoff.listFailed', 'limit', (v) => bullmqHandoff({ queue }).listFailed(any({ limit: v }))],
  ['bullmqHandoff.work', 'receiver', (v) => bullmqHandoff({ queue }).work(v as never)],
  [
    'bullmqHandoff.work',
    'concurrency',
    (v) => bullmqHandoff({ queue }).work(receiver, any({ concurrency: v })),
  ],
  ['runWorker', 'receiver', (v) => runWorker(v as never, { connection })],
  ['runWorker', 'connection', (v) => runWorker(receiver, any({ connection: v }))],
  ['runWorker', 'concurrency', (v) => runWorker(receiver, any({ connection, concurrency: v }))],

  ['pgBossHandoff', 'boss', (v) => pgBossHandoff(any({ boss: v }))],
  ...(['queue', 'schema', 'timeoutMs'] as const).map((name): Row => [
    'pgBossHandoff',
    name,
    (v) => pgBossHandoff(any({ boss, [name]: v })),
  ]),
  ['pgBossHandoff.listFailed', 'limit', (v) => pgBossHandoff({ boss }).listFailed(any({ limit: v }))],
  ...(['concurrency', 'pollingIntervalSeconds', 'onWorkerError'] as const).map((name): Row => [
    'pgBossHandoff.work',
    name,
    (v) => pgBossHandoff({ boss }).work(receiver, any({ [name]: v })),
  ]),
  ['runPgBossWorker', 'receiver', (v) => runPgBossWorker(v as never, { boss })],
  ['runPgBossWorker', 'boss', (v) => runPgBossWorker(receiver, any({ boss: v }))],
  ['runPgBossWorker', 'queue', (v) => runPgBossWorker(receiver, any({ boss, queue: v }))],
  ['runPgBossWorker', 'concurrency', (v) => runPgBossWorker(receiver, any({ boss, concurrency: v }))],
  [
    'runPgBossWorker',
    'pollingIntervalSeconds',
    (v) => runPgBossWorker(receiver, any({ boss, pollingIntervalSeconds: v })),
  ],
  ['runPgBossWorker', 'onWorkerError', (v) => runPgBossWorker(receiver, any({ boss, onWorkerError: v }))],

  ['natsHandoff', 'js', (v) => natsHandoff(any({ js: v }))],
  ...(['stream', 'subject', 'duplicateWindowMs', 'timeoutMs', 'consumer'] as const).map((name): Row => [
    'natsHandoff',
    name,
    (v) => natsHandoff(any({ js, [name]: v })),
  ]),
  ['natsHandoff.listFailed', 'limit', (v) => natsHandoff({ js }).listFailed(any({ limit: v }))],
  ...(['attempts', 'ackWaitMs', 'concurrency', 'backoffMs'] as const).map((name): Row => [
    'natsHandoff.work',
    name,
    (v) => natsHandoff({ js }).work(receiver, any({ [name]: v })),
  ]),
  ['runNatsWorker', 'receiver', (v) => runNatsWorker(v as never, { js })],
  ['runNatsWorker', 'js', (v) => runNatsWorker(receiver, any({ js: v }))],
  ...(['stream', 'subject', 'consumer', 'attempts', 'ackWaitMs', 'concurrency', 'backoffMs'] as const).map(
    (name): Row => ['runNatsWorker', name, (v) => runNatsWorker(receiver, any({ js, [name]: v }))],
  ),

  ['hmacSha256', 'header', (v) => hmacSha256(any({ header: v })), NUMBER_ONLY],
  ['hmacSha256', 'prefix', (v) => hmacSha256(any({ header: 'x-signature', prefix: v })), NUMBER_ONLY],
  ['hmacSha256', 'encoding', (v) => hmacSha256(any({ header: 'x-signature', encoding: v }))],
  ['hmacSha256', 'secretForm', (v) => hmacSha256(any({ header: 'x-signature', secretForm: v }))],
  ['standardWebhooks', 'secretForm', (v) => standardWebhooks(any({ secretForm: v }))],
  ['stripeSignature', 'header', (v) => stripeSignature(any({ header: v })), NUMBER_ONLY],
  ['stripeSignature', 'secretForm', (v) => stripeSignature(any({ secretForm: v }))],
  ['signDelivery', 'secret', (v) => signDelivery(any({ secret: v, payload: {} })), NUMBER_ONLY],
  ['signDelivery', 'secret', (v) => signDelivery(any({ secret: `whsec_${String(v)}`, payload: {} })), [TEXT]],
  ['signDelivery', 'id', (v) => signDelivery(any({ secret: SECRET, payload: {}, id: v })), NUMBER_ONLY],
  ['signDelivery', 'timestamp', (v) => signDelivery(any({ secret: SECRET, payload: {}, timestamp: v }))],
  ['signDelivery', 'scheme', (v) => signDelivery(any({ secret: SECRET, payload: {}, scheme: v }))],
  ...(
    [
      ['family', {}],
      ['header', { scheme: 'stripe' }],
      ['idHeader', { scheme: 'unsigned' }],
      ['prefix', { scheme: 'hmac-sha256' }],
      ['encoding', { scheme: 'hmac-sha256' }],
      ['secretForm', { scheme: 'svix' }],
    ] as const
  ).map(([field, base]): Row => [
    'signDelivery',
    `scheme.${field}`,
    (v) => signDelivery(any({ secret: SECRET, payload: {}, scheme: { ...base, [field]: v } })),
    // A prefix may be any string: only a number is refused.
    field === 'prefix' ? NUMBER_ONLY : undefined,
  ]),

  ...(
    [
      'port',
      'credits',
      'creditsPerImage',
      'maxConcurrentJobs',
      'allowedHosts',
      'apiKey',
      'signing',
      'payload',
    ] as const
  ).map((name): Row => ['startGateway', name, (v) => startGateway(any({ [name]: v }))]),
  ['startGateway', 'host', (v) => startGateway(any({ host: v })), NUMBER_ONLY],
  ...(
    [
      ['rateLimit', 'requests'],
      ['rateLimit', 'windowMs'],
      ['lists', 'pageSize'],
      ['lists', 'style'],
      ['jobs', 'stepMs'],
      ['jobs', 'outcome'],
      ['deliveries', 'retryDelaysMs'],
      ['deliveries', 'retryOn'],
      ['deliveries', 'idOnRetry'],
      ['deliveries', 'timeoutMs'],
      ['deliveries', 'duplicateRate'],
      ['deliveries', 'dropRate'],
      ['deliveries', 'ca'],
    ] as const
  ).map(([group, field]): Row => [
    'startGateway',
    `${group}.${field}`,
    (v) => startGateway(any({ [group]: { ...GROUP_BASE[group], [field]: v } })),
  ]),
];

const cases = rows.flatMap(([where, name, call, values = [TEXT, NUMBER]]) =>
  values.map((value) => [where, name, typeof value, call, value] as const),
);

test.each(cases)(
  '%s refuses a bad `%s` (a %s), naming both and not the value',
  async (where, name, _kind, call, value) => {
    let thrown: unknown;
    try {
      await call(value);
    } catch (error) {
      thrown = error;
    }
    expect(thrown).toMatchObject({ name: 'JobhookError', code: 'invalid_options' });
    const { message } = thrown as Error;
    expect(message.startsWith(`${where}: \`${name}\` must be `), message).toBe(true);
    expect(message).toMatch(/; got (a|an|NaN|null|nothing|zero)\b/);
    expect(message).not.toContain('s3cr3t');
    expect(message).not.toContain('7.25');
  },
);

test.each([
  [Number.NaN, 'NaN'],
  [Number.POSITIVE_INFINITY, 'an infinite number'],
  [0, 'zero'],
  [1.5, 'a fraction'],
  [2 ** 60, 'a number too large to be exact'],
  ['', 'an empty string'],
  [null, 'null'],
  [[], 'an empty array'],
  [{ bytes: 1 }, 'an object'],
  [() => 1, 'a function'],
  [10n, 'a bigint'],
])('the message tells what kind of value was given: %s is %s', (value, kind) => {
  expect(() => createReceiver({ secret: SECRET, maxBodyBytes: value as never })).toThrow(
    `createReceiver: \`maxBodyBytes\` must be a positive integer (bytes); got ${kind}.`,
  );
});
