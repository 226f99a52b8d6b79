// runProbe against the gateway simulator set to each family of signature, each payload shape and
// two retry schedules: the report says what the simulator was told to do, a receiver made with
// the report handles the next delivery typed through a real HTTP server and refuses a forged one,
// and the probe's webhook is gone afterwards, also after a failure and an abort.
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { runInNewContext } from 'node:vm';
import {
  createReceiver,
  type JobCompletedEvent,
  type JobFailedEvent,
  type ReceiverContract,
  type ReceiverOptions,
} from 'jobhook';
import { createClient, type GatewayClient } from 'jobhook/client';
import { nodeHandler } from 'jobhook/node';
import { signDelivery, startGateway, type Gateway, type GatewayOptions } from 'jobhook/testing';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { ProbeError, runProbe, type ProbeOptions } from '../../src/tools/probe/probe.js';
import { summaryLines, type ProbeReport } from '../../src/tools/probe/report.js';
import { typeCheck } from '../repository/code-blocks.js';
import { SECRET } from '../fixtures.js';

/** A secret of the same form as SECRET, for forgeries. */
const OTHER_SECRET = `whsec_${Buffer.from('not-the-registered-secret-01234').toString('base64')}`;

const closers: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const close of closers.splice(0).reverse()) await close();
});

async function simulator(options: GatewayOptions) {
  const gateway = await startGateway({ jobs: { stepMs: 1 }, deliveries: { retryDelaysMs: [] }, ...options });
  closers.push(() => gateway.close());
  const client = createClient({ baseUrl: gateway.baseUrl, apiKey: gateway.apiKey });
  return { gateway, client };
}

async function probe(options: GatewayOptions, probing: Partial<ProbeOptions> = {}) {
  const { gateway, client } = await simulator(options);
  const report = await runProbe({ client, baseUrl: gateway.baseUrl, timeoutMs: 5000, ...probing });
  return { gateway, client, report };
}

/** The probe's webhook is deleted: the account has none left. */
async function expectNoWebhooks(client: GatewayClient) {
  expect(await client.webhooks.list()).toEqual([]);
}

/** The paste-ready code of an unsigned or unknown sender: confirm mode, never verification off, and it compiles. */
function expectConfirmMode(report: ProbeReport) {
  expect(report.typescript).toContain('confirm: { client, jobs }');
  expect(report.typescript).not.toContain('dangerouslySkipVerification');
  expect(report.typescript).not.toContain('secret');
  pasted.push(report.typescript!);
}

/** The paste-ready code the tests saw, type-checked once at the end. */
const pasted: string[] = [];
afterAll(async () => {
  if (pasted.length > 0) expect(await typeCheck('probe-pasted', pasted, {})).toBe('');
}, 120_000);

/**
 * A receiver made with the report, mounted on a real server and registered with the simulator:
 * the next job's delivery must reach its handler typed, and a delivery signed with another secret
 * must be refused 401.
 */
async function adopt(
  gateway: Gateway,
  client: GatewayClient,
  report: ProbeReport,
  family: NonNullable<GatewayOptions['signing']>,
  more: Partial<ReceiverOptions> = {},
) {
  const events: (JobCompletedEvent | JobFailedEvent)[] = [];
  const receiver = createReceiver({
    secret: SECRET,
    contract: report as never,
    logger: { error: () => undefined },
    ...more,
  });
  receiver.onJobCompleted((event) => void events.push(event));
  receiver.onJobFailed((event) => void events.push(event));
  const server = createServer(nodeHandler(receiver));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  closers.push(() => new Promise((resolve) => server.close(resolve)));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/`;
  const webhook = await client.webhooks.create({
    url,
    events: ['job.completed', 'job.failed'],
    secret_key: SECRET,
  });
  const { task_id } = await client.images.generate({ model: 'm', prompt: 'a fox' });
  await gateway.settled();
  const task = await client.images.get(task_id);
  expect(events).toMatchObject([
    {
      type: 'job.completed',
      id: expect.any(String),
      created_at: expect.any(String),
      data: { task_id, status: 'completed', image_url: task.image_url },
    },
  ]);
  await client.webhooks.delete(webhook.id);
  // In confirm mode nothing is verified to forge: the gateway's answer is the check.
  if (more.confirm) return { events, forged: undefined };
  // A delivery signed in the same family with another secret.
  const forged = signDelivery({
    secret: OTHER_SECRET,
    payload: { type: 'job.completed' },
    scheme: family as never, // a foreign scheme of the simulator's is never forged (confirm mode above)
  });
  const answer = await fetch(url, { method: 'POST', headers: forged.headers, body: forged.body as BodyInit });
  return { events, forged: answer.status };
}

const DEFAULT_PATHS = {
  typePath: 'type',
  taskIdPath: 'data.task_id',
  imageUrlPath: 'data.image_url',
  eventIdPath: 'id',
  createdAtPath: 'created_at',
};
const SHAPES = {
  default: DEFAULT_PATHS,
  'type-in-header': { ...DEFAULT_PATHS, typePath: 'header:x-event-type' },
  flat: {
    typePath: 'event',
    taskIdPath: 'task_id',
    imageUrlPath: 'image_url',
    eventIdPath: null,
    createdAtPath: 'timestamp',
  },
  nested: {
    typePath: 'type',
    taskIdPath: 'data.object.id',
    imageUrlPath: 'data.object.output.url',
    eventIdPath: 'id',
    createdAtPath: 'created',
  },
} as const;

describe('each family of signature, in each payload shape', () => {
  const cases: {
    name: string;
    signing: NonNullable<GatewayOptions['signing']>;
    shape: keyof typeof SHAPES;
    signature: Record<string, unknown>;
  }[] = [
    {
      name: 'standard-webhooks',
      signing: 'standard-webhooks',
      shape: 'default',
      signature: {
        scheme: 'standard-webhooks',
        header: 'webhook-signature',
        headers: { id: 'webhook-id', timestamp: 'webhook-timestamp', signature: 'webhook-signature' },
        signedContent: 'id.timestamp.body',
        encoding: 'base64',
        prefix: 'v1,',
        secretForm: 'whsec-base64',
      },
    },
    {
      name: 'svix',
      signing: 'svix',
      shape: 'nested',
      signature: {
        scheme: 'standard-webhooks',
        header: 'svix-signature',
        headers: { id: 'svix-id', timestamp: 'svix-timestamp', signature: 'svix-signature' },
        signedContent: 'id.timestamp.body',
        secretForm: 'whsec-base64',
      },
    },
    {
      name: 'hmac-sha256, hex with a prefix (GitHub)',
      signing: 'hmac-sha256',
      shape: 'flat',
      signature: {
        scheme: 'hmac-sha256',
        header: 'x-hub-signature-256',
        signedContent: 'body',
        encoding: 'hex',
        prefix: 'sha256=',
        secretForm: 'whsec-base64',
      },
    },
    {
      name: 'hmac-sha256, hex without a prefix',
      signing: { scheme: 'hmac-sha256', header: 'x-signature', prefix: '' },
      shape: 'type-in-header',
      signature: { scheme: 'hmac-sha256', header: 'x-signature', encoding: 'hex', prefix: '' },
    },
    {
      name: 'hmac-sha256, base64 with a prefix, the secret as text',
      signing: {
        scheme: 'hmac-sha256',
        header: 'x-webhook-signature',
        encoding: 'base64',
        secretForm: 'utf8',
      },
      shape: 'default',
      signature: {
        scheme: 'hmac-sha256',
        header: 'x-webhook-signature',
        encoding: 'base64',
        prefix: 'sha256=',
        secretForm: 'utf8',
      },
    },
    {
      name: 'hmac-sha256, base64 without a prefix',
      signing: { scheme: 'hmac-sha256', header: 'x-signature', prefix: '', encoding: 'base64' },
      shape: 'nested',
      signature: { scheme: 'hmac-sha256', header: 'x-signature', encoding: 'base64', prefix: '' },
    },
    {
      name: "stripe (Stripe's layout)",
      signing: 'stripe',
      shape: 'flat',
      signature: {
        scheme: 'stripe',
        header: 'stripe-signature',
        signedContent: 'timestamp.body',
        encoding: 'hex',
        prefix: 't=<unix>,v1=',
        secretForm: 'utf8',
      },
    },
  ];

  it.each(cases)('$name, $shape payload', async ({ signing, shape, signature }) => {
    const { gateway, client, report } = await probe({ signing, payload: shape });
    expect(report.signature).toMatchObject(signature);
    expect(report.payload).toMatchObject({ ...SHAPES[shape], errorPath: expect.any(String) });
    expect(report.check).toEqual({ completed: 'handled', failed: null, forgedRefused: true });
    expect(report.contract?.signature.scheme).toBe(signature.scheme);
    // The TypeScript to paste holds the same contract.
    const literal = /const contract: ReceiverContract = ([\s\S]*?);\n\nconst receiver/.exec(
      report.typescript!,
    )![1]!;
    expect(runInNewContext(`(${literal})`)).toEqual(report.contract);
    expect(report.probe.webhookDeleted).toBe(true);
    await expectNoWebhooks(client);
    const adopted = await adopt(gateway, client, report, signing);
    expect(adopted.forged).toBe(401);
  });

  it('unsigned: reported as such, adopted in confirm mode, never with verification off', async () => {
    const { gateway, client, report } = await probe({ signing: 'unsigned', payload: 'flat' });
    expect(report.signature).toMatchObject({ scheme: 'unsigned', header: null, seen: [] });
    expect(report.contract?.signature).toEqual({ scheme: 'unsigned' });
    expectConfirmMode(report);
    // Checked in confirm mode: its delivery was confirmed with the gateway, not taken on trust.
    expect(report.check).toEqual({ completed: 'handled', failed: null, forgedRefused: null });
    expect(summaryLines(report).join('\n')).toMatch(
      /^Check: a receiver made with the contract, in confirm mode/m,
    );
    expect(() => createReceiver({ secret: SECRET, contract: report as never })).toThrow(
      /`contract.signature.scheme` is "unsigned"/,
    );
    await expectNoWebhooks(client);
    await adopt(gateway, client, report, 'unsigned', { confirm: { client } });
  });

  for (const scheme of ['hmac-sha512', 'slack-v0'] as const) {
    it(`${scheme}: a scheme jobhook cannot verify is unknown, adopted in confirm mode`, async () => {
      const { gateway, client, report } = await probe({ signing: scheme });
      expect(report.signature.scheme).toBe('unknown');
      expect(report.contract?.signature).toEqual({ scheme: 'unknown' });
      expectConfirmMode(report);
      expect(report.check).toMatchObject({ completed: 'handled' });
      await expectNoWebhooks(client);
      const adopted = await adopt(gateway, client, report, scheme, { confirm: { client } });
      expect(adopted.events).toHaveLength(1);
    });
  }

  it('unknown: a layout no preset reads is described (never its values), and what it signs', async () => {
    const { createHmac } = await import('node:crypto');
    const signing = {
      name: 'timestamp-then-body',
      prepare: () => () => ({ ok: true as const }),
      sign: ({
        secret,
        body,
        timestamp,
      }: {
        secret: string;
        body: string | Uint8Array;
        timestamp: number;
      }) => ({
        'x-ts': String(timestamp),
        'x-mac': createHmac('sha256', secret).update(`${timestamp}.`).update(body).digest('hex'),
      }),
    };
    const { report } = await probe({ signing });
    expect(report.signature).toMatchObject({
      scheme: 'unknown',
      header: null,
      seen: [{ name: 'x-mac', length: 64, shape: '<hex:64>' }],
      matched: {
        header: 'x-mac',
        signedContent: 'timestamp.body',
        timestampHeader: 'x-ts',
        encoding: 'hex',
        secretForm: 'utf8',
      },
    });
    expect(report.contract?.signature).toEqual({ scheme: 'unknown' });
  });
});

describe('failed jobs', () => {
  it('--fail-prompt: the failed delivery shows the failed type value and the error, both handled', async () => {
    const { report } = await probe({ payload: 'nested' }, { failPrompt: 'please fail' });
    expect(report.payload).toMatchObject({
      typeValues: { completed: 'job.completed', failed: 'job.failed' },
      errorPath: 'data.object.error',
      assumed: [],
    });
    expect(report.check).toMatchObject({ completed: 'handled', failed: 'handled' });
  });

  it('without one, the failed type value and the error path are guessed, and said so', async () => {
    const { report } = await probe({ payload: 'flat' });
    expect(report.payload).toMatchObject({ typeValues: { failed: 'job.failed' }, errorPath: 'error' });
    expect(report.payload.assumed).toEqual(['typeValues.failed', 'errorPath']);
    expect(report.notes.join(' ')).toMatch(/guessed/);
  });
});

describe('retries', () => {
  /**
   * Each measured delay is the scheduled one or later: a timer never fires early, but on a busy
   * machine it fires late by as long as the processes before it keep the CPU, so lateness has only
   * a bound against a schedule of another order (seconds where milliseconds were set).
   */
  const LATE_MS = 5_000;
  const within = (measured: number[], expected: number[]) => {
    expect(measured).toHaveLength(expected.length);
    measured.forEach((delay, i) => {
      expect(delay).toBeGreaterThanOrEqual(expected[i]! * 0.85);
      expect(delay).toBeLessThanOrEqual(expected[i]! + LATE_MS);
    });
  };

  it('the delays of one schedule, the same delivery id on every attempt, then 200', async () => {
    const { report, gateway } = await probe(
      { deliveries: { retryDelaysMs: [400, 800, 5000] } },
      { retriesForMs: 1000 },
    );
    within(report.retries.delaysMs, [400, 800]);
    expect(report.retries).toMatchObject({
      measured: true,
      attempts: 3,
      deliveryIdHeader: 'webhook-id',
      sameDeliveryId: true,
      sameEventId: true,
      sameBody: true,
      delivered: true,
    });
    // The first webhook is the probe's own; the second, with a plain secret, is answered 200.
    const own = gateway.deliveries.filter((attempt) => attempt.webhookId === report.probe.webhookId);
    expect(own.map((attempt) => attempt.status)).toEqual([500, 500, 200]);
  });

  it('another schedule, a fresh id on each attempt (in an id header of its own)', async () => {
    const { report } = await probe(
      {
        signing: { scheme: 'hmac-sha256', idHeader: 'x-delivery-id' },
        payload: 'flat',
        deliveries: { retryDelaysMs: [800, 400], idOnRetry: 'new' },
      },
      { retriesForMs: 900 },
    );
    within(report.retries.delaysMs, [800, 400]);
    expect(report.retries).toMatchObject({
      deliveryIdHeader: 'x-delivery-id',
      sameDeliveryId: false,
      delivered: true,
    });
    expect(report.retries.lastAttemptAfterMs).toBeGreaterThanOrEqual(1200);
  });

  it('a sender that gives up before the window ends: not delivered, and said so', async () => {
    const { report } = await probe(
      { deliveries: { retryDelaysMs: [300] } },
      { retriesForMs: 600, timeoutMs: 700 },
    );
    expect(report.retries).toMatchObject({ attempts: 2, delivered: false });
    expect(report.notes.join(' ')).toMatch(/may have given up/);
  });
});

describe('the webhook is deleted whatever happens', () => {
  it('a job that fails: the probe fails, naming why, and deletes its webhook', async () => {
    const { gateway, client } = await simulator({});
    const probing = runProbe({
      client,
      baseUrl: gateway.baseUrl,
      timeoutMs: 5000,
      job: { prompt: 'please fail' },
    });
    await expect(probing).rejects.toMatchObject({
      name: 'ProbeError',
      message: expect.stringMatching(/ended failed: the probe needs a completed job/),
      webhookDeleted: true,
    });
    await expectNoWebhooks(client);
  });

  it('aborted while it waits: rejects with the reason, after deleting its webhook', async () => {
    const { gateway, client } = await simulator({ jobs: { auto: false } });
    const stop = new AbortController();
    const probing = runProbe({
      client,
      baseUrl: gateway.baseUrl,
      signal: stop.signal,
      progress: (line) => line.startsWith('Submitted') && stop.abort(new Error('interrupted (SIGINT)')),
    });
    const error = (await probing.catch((caught: unknown) => caught)) as ProbeError;
    expect(error).toBeInstanceOf(ProbeError);
    expect(error).toMatchObject({ message: 'interrupted (SIGINT)', webhookDeleted: true });
    await expectNoWebhooks(client);
  });

  it('no webhook without a gateway that takes it: nothing left to delete', async () => {
    const { gateway, client } = await simulator({});
    gateway.failNext({ status: 500, method: 'POST', path: '/api/v1/webhooks', times: 1 });
    await expect(runProbe({ client, timeoutMs: 1000 })).rejects.toMatchObject({
      message: expect.stringMatching(/^could not register the webhook/),
      webhookId: null,
    });
  });
});

it('the report and the contract carry no secret', async () => {
  const { report, gateway } = await probe({ signing: 'standard-webhooks' });
  const text = JSON.stringify(report);
  expect(text).not.toContain('whsec_');
  expect(text).not.toContain(gateway.apiKey);
  const contract: ReceiverContract = report.contract!;
  expect(Object.keys(contract)).toEqual(['version', 'signature', 'payload']);
});

describe('a plain secret', () => {
  /** A plain base64 secret (no `whsec_`), as a user may hold one. */
  const PLAIN = Buffer.from('a-plain-secret-of-thirty-two-bytes').toString('base64');

  /** A receiver given PLAIN and the report's contract, behind a webhook with PLAIN: what one genuine delivery did. */
  async function adoptPlain(gateway: Gateway, client: GatewayClient, report: ProbeReport) {
    const events: JobCompletedEvent[] = [];
    const receiver = createReceiver({
      secret: PLAIN,
      contract: report as never,
      logger: { error: () => undefined },
    });
    receiver.onJobCompleted((event) => void events.push(event));
    const server = createServer(nodeHandler(receiver));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    closers.push(() => new Promise((resolve) => server.close(resolve)));
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/`;
    const webhook = await client.webhooks.create({ url, events: ['job.completed'], secret_key: PLAIN });
    const { task_id } = await client.images.generate({ model: 'm', prompt: 'a fox' });
    await gateway.settled();
    await client.webhooks.delete(webhook.id);
    return events.map((event) => event.data.task_id === task_id);
  }

  it('a gateway that base64-decodes any secret: the contract says base64, and a plain secret verifies', async () => {
    const { gateway, client, report } = await probe({
      signing: { scheme: 'standard-webhooks', secretForm: 'base64' },
    });
    expect(report.signature.secretForm).toBe('base64');
    expect(report.contract!.signature).toMatchObject({ secretForm: 'base64' });
    expect(summaryLines(report).join('\n')).toContain('after whsec_ or without it (base64)');
    await expectNoWebhooks(client);
    expect(await adoptPlain(gateway, client, report)).toEqual([true]);
  });

  it('a gateway that reads a plain secret as text: the contract keeps whsec-base64, and a plain secret verifies', async () => {
    const { gateway, client, report } = await probe({ signing: 'standard-webhooks' });
    expect(report.signature.secretForm).toBe('whsec-base64');
    await expectNoWebhooks(client);
    expect(await adoptPlain(gateway, client, report)).toEqual([true]);
  });
});
