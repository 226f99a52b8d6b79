/**
 * Core, per delivery: jobhook `receive()` against the hand-written floor and the libraries users
 * would otherwise pick, each on the same body signed in its own scheme.
 */
import { createHmac } from 'node:crypto';
import { Webhooks } from '@octokit/webhooks';
import { Webhook as StandardWebhook } from 'standardwebhooks';
import Stripe from 'stripe';
import { Webhook as SvixWebhook } from 'svix';
import {
  KEY,
  PLAIN_SECRET,
  SECRET,
  githubHeaders,
  jobCompletedBody,
  standardDeliveries,
  standardHeaders,
  stringDeliveries,
  stripeHeader,
  svixHeaders,
} from './fixtures.js';
import { verifyByHand } from './handwritten.js';
import { createReceiver, type Build } from './jobhook.js';
import { bench, compare, type Case, type CompareOptions, type Samples } from './measure.js';
import type { StandardSchemaV1 } from 'jobhook/extend';

export const CASES = {
  floor: 'hand-written floor',
  jobhook: 'jobhook receive()',
  standardwebhooks: 'standardwebhooks verify',
  floorString: 'hand-written floor, string body',
  jobhookString: 'jobhook receive(), string body',
  standardwebhooksString: 'standardwebhooks verify, string body',
  svix: 'svix verify',
  octokitVerify: '@octokit/webhooks verify',
  octokitReceive: '@octokit/webhooks verifyAndReceive',
  stripe: 'stripe constructEvent',
} as const;

/** The build before's `receive()` (BENCH_BASELINE), measured at 1 KB beside today's. */
export const BEFORE = {
  jobhook: 'jobhook receive(), build before',
  jobhookString: 'jobhook receive(), string body, build before',
} as const;

const noop = () => {};

/**
 * A receiver as users create one: default verifier, default in-memory dedupe, one no-op handler;
 * today's build unless another's `createReceiver` is given.
 */
export function benchReceiver(create: Build['createReceiver'] = createReceiver) {
  return create({ secret: SECRET }).onJobCompleted(noop);
}

/** jobhook `receive()` on fresh, valid deliveries; checks the first answer is a 200. */
export async function jobhookCase(
  name: string,
  body: Buffer,
  receiver: Pick<ReturnType<typeof benchReceiver>, 'receive'> = benchReceiver(),
): Promise<Case> {
  const [first] = standardDeliveries(body, 1);
  const answer = await receiver.receive(first!);
  if (answer.status !== 200 || answer.body !== '{"ok":true}') {
    throw new Error(`${name}: receive() answered ${answer.status} ${answer.body}`);
  }
  return bench(
    name,
    (n) => standardDeliveries(body, n),
    (d, i) => receiver.receive(d[i]!),
  );
}

/** jobhook `receive()` given each fresh delivery's body as a string. */
function jobhookStringCase(name: string, body: Buffer, receiver = benchReceiver()): Case {
  return bench(
    name,
    (n) => stringDeliveries(body, n),
    (d, i) => receiver.receive(d[i]!),
  );
}

export function floorCase(name: string, body: Buffer, asString = false): Case {
  return bench(
    name,
    (n): { headers: Record<string, string>; body: Buffer | string }[] =>
      asString ? stringDeliveries(body, n) : standardDeliveries(body, n),
    (d, i) => {
      const { headers } = d[i]!;
      const event = verifyByHand(
        KEY,
        headers['webhook-id'],
        headers['webhook-timestamp'],
        headers['webhook-signature'],
        d[i]!.body,
      );
      if (event === undefined) throw new Error('the floor rejected a valid delivery');
    },
  );
}

/** HMAC-SHA256 of the signed content alone: the hashing rate. */
export function hmacCase(name: string, body: Buffer): Case {
  return bench(
    name,
    () => null,
    () => createHmac('sha256', KEY).update('msg_0123456789abcdef01234567.1700000000.').update(body).digest(),
  );
}

async function casesFor(body: Buffer, before?: Build): Promise<Case[]> {
  const standard = new StandardWebhook(SECRET);
  const svix = new SvixWebhook(SECRET);
  const octokit = new Webhooks({ secret: PLAIN_SECRET });
  octokit.on('ping', noop);
  const stripe = new Stripe('sk_test_jobhook_bench');
  const text = body.toString('utf8');
  const github = githubHeaders(body);
  const signature = github['x-hub-signature-256'];
  const stripeSignature = stripeHeader(body);

  // Every library must accept its input before it is timed.
  standard.verify(body, standardHeaders(body));
  svix.verify(body, svixHeaders(body));
  if (!(await octokit.verify(text, signature))) throw new Error('octokit rejected its delivery');
  await octokit.verifyAndReceive({ id: github['x-github-delivery'], name: 'ping', payload: text, signature });
  stripe.webhooks.constructEvent(body, stripeSignature, PLAIN_SECRET);

  const beforeCases = before
    ? [
        await jobhookCase(BEFORE.jobhook, body, benchReceiver(before.createReceiver)),
        jobhookStringCase(BEFORE.jobhookString, body, benchReceiver(before.createReceiver)),
      ]
    : [];
  return [
    floorCase(CASES.floor, body),
    await jobhookCase(CASES.jobhook, body),
    floorCase(CASES.floorString, body, true),
    jobhookStringCase(CASES.jobhookString, body),
    ...beforeCases,
    bench(
      CASES.standardwebhooksString,
      (n) => stringDeliveries(body, n),
      (d, i) => standard.verify(d[i]!.body, d[i]!.headers),
    ),
    bench(
      CASES.standardwebhooks,
      (n) => standardDeliveries(body, n),
      (d, i) => standard.verify(d[i]!.body, d[i]!.headers),
    ),
    bench(
      CASES.svix,
      (n) => Array.from({ length: n }, () => svixHeaders(body)),
      (h, i) => svix.verify(body, h[i]!),
    ),
    bench(
      CASES.octokitVerify,
      () => null,
      () => octokit.verify(text, signature),
    ),
    bench(
      CASES.octokitReceive,
      () => null,
      () =>
        octokit.verifyAndReceive({ id: github['x-github-delivery'], name: 'ping', payload: text, signature }),
    ),
    bench(
      CASES.stripe,
      () => null,
      () => stripe.webhooks.constructEvent(body, stripeSignature, PLAIN_SECRET),
    ),
  ];
}

export interface CoreResult {
  size: number;
  bytes: number;
  samples: Samples;
}

/** `before`: the build before (BENCH_BASELINE), whose `receive()` joins the 1 KB rounds. */
export async function runCore(
  sizes: number[],
  options: CompareOptions,
  before?: Build,
): Promise<CoreResult[]> {
  const results: CoreResult[] = [];
  for (const size of sizes) {
    const body = jobCompletedBody(size);
    const cases = await casesFor(body, size === 1024 ? before : undefined);
    results.push({ size, bytes: body.length, samples: await compare(cases, options) });
  }
  return results;
}

/**
 * Where the time of `receive()` goes at one size: the receiver as users create it, then with the
 * features the floor does not have turned off one by one (the job results kept for `waitFor`, the
 * dedupe store, schema validation), each against the floor in the same interleaved rounds.
 */
export const BREAKDOWN = {
  all: 'receive(), as created (default options)',
  noResults: 'results: false',
  noDedupe: 'dedupe: false',
  neither: 'results: false, dedupe: false',
  bare: 'results: false, dedupe: false, a schema that checks nothing',
} as const;

const acceptAnything: StandardSchemaV1 = {
  '~standard': { version: 1, vendor: 'bench', validate: (value: unknown) => ({ value }) },
};

export async function runCoreBreakdown(size: number, options: CompareOptions): Promise<Samples> {
  const body = jobCompletedBody(size);
  const variants: Record<keyof typeof BREAKDOWN, Parameters<typeof createReceiver>[0]> = {
    all: { secret: SECRET },
    noResults: { secret: SECRET, results: false },
    noDedupe: { secret: SECRET, dedupe: false },
    neither: { secret: SECRET, results: false, dedupe: false },
    bare: { secret: SECRET, results: false, dedupe: false, schemas: { 'job.completed': acceptAnything } },
  };
  const cases = [floorCase(CASES.floor, body)];
  for (const [key, receiverOptions] of Object.entries(variants)) {
    const receiver = createReceiver(receiverOptions).onJobCompleted(noop);
    cases.push(await jobhookCase(BREAKDOWN[key as keyof typeof BREAKDOWN], body, receiver));
  }
  return compare(cases, options);
}
