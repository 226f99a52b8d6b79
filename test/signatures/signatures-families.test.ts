// The verifier presets of each family of senders (Standard Webhooks under Svix's names too, the
// body's HMAC in one header, Stripe's timestamped layout), each against the published package of
// the family: they sign, our presets verify; we sign, they verify.
import { Webhooks as OctokitWebhooks } from '@octokit/webhooks';
import Stripe from 'stripe';
import { Webhook as StandardWebhook } from 'standardwebhooks';
import { Webhook as SvixWebhook } from 'svix';
import { describe, expect, test } from 'vitest';
import { createReceiver, hmacSha256, standardWebhooks, stripeSignature } from 'jobhook';
import type { SignedRequest, VerifyFunction, VerifyOutcome } from 'jobhook/extend';
import { signDelivery } from 'jobhook/testing';
import { completedPayload, SECRET } from '../fixtures.js';

const NOW = 1_800_000_000;
const BODY = JSON.stringify(completedPayload());
/** Stripe's secrets look like this: `whsec_` and text, used as the key as written. */
const STRIPE_SECRET = 'whsec_stripeLikeSecretUsedAsText0123';

function request(headers: Record<string, string>, body: string = BODY, now = NOW * 1000): SignedRequest {
  return {
    headers: { get: (name) => headers[name] },
    body: Buffer.from(body),
    now,
    toleranceSeconds: 300,
  };
}

// The built-in presets verify synchronously on Node.
const run = (verify: VerifyFunction, req: SignedRequest) => verify(req) as VerifyOutcome;

const svixNames = (headers: Record<string, string>) => ({
  'svix-id': headers['webhook-id']!,
  'svix-timestamp': headers['webhook-timestamp']!,
  'svix-signature': headers['webhook-signature']!,
});

describe("standardWebhooks() under Svix's header names", () => {
  const verify = standardWebhooks().prepare([SECRET]);
  const signed = signDelivery({ secret: SECRET, payload: BODY, id: 'msg_svix', timestamp: NOW }).headers;

  test('verifies what the svix package signs, sent with svix-* headers', () => {
    const signature = new SvixWebhook(SECRET).sign('msg_1', new Date(NOW * 1000), BODY);
    const headers = { 'svix-id': 'msg_1', 'svix-timestamp': String(NOW), 'svix-signature': signature };
    expect(run(verify, request(headers))).toEqual({ ok: true, id: 'msg_1' });
    expect(verify.checkHeaders!(request(headers))).toBeUndefined();
    expect(run(verify, request(headers, `${BODY} `))).toMatchObject({ ok: false, code: 'no_match' });
  });

  test("signDelivery({ scheme: 'svix' }) signs what the svix package verifies", () => {
    const delivery = signDelivery({ secret: SECRET, payload: BODY, scheme: 'svix' });
    expect(Object.keys(delivery.headers).filter((name) => name.startsWith('webhook-'))).toEqual([]);
    const svixHeaders = {
      'svix-id': delivery.headers['svix-id']!,
      'svix-timestamp': delivery.headers['svix-timestamp']!,
      'svix-signature': delivery.headers['svix-signature']!,
    };
    expect(() => new SvixWebhook(SECRET).verify(BODY, svixHeaders)).not.toThrow();
  });

  test('both sets, equal, are one delivery', () => {
    const both = { ...signed, ...svixNames(signed) };
    expect(run(verify, request(both))).toEqual({ ok: true, id: 'msg_svix' });
    expect(verify.checkHeaders!(request(both))).toBeUndefined();
  });

  test.each([
    ['a different id', { 'svix-id': 'msg_other' }],
    ['a different timestamp', { 'svix-timestamp': String(NOW - 1) }],
    ['a different signature', { 'svix-signature': `v1,${Buffer.alloc(32).toString('base64')}` }],
    ['only one svix header beside the webhook set', { 'svix-id': undefined, 'svix-timestamp': undefined }],
  ])('both sets, with %s, are refused as malformed, before and after the body', (_name, change) => {
    const headers = Object.fromEntries(
      Object.entries({ ...signed, ...svixNames(signed), ...change }).filter(
        ([, value]) => value !== undefined,
      ),
    ) as Record<string, string>;
    const refusal = { ok: false, code: 'malformed_header', detail: expect.stringMatching(/svix-\*/) };
    expect(run(verify, request(headers))).toEqual(refusal);
    expect(verify.checkHeaders!(request(headers))).toEqual(refusal);
  });

  test('svix headers without svix-signature beside a whole webhook set are not a second set', () => {
    const stray = { ...signed, 'svix-id': 'msg_other', 'svix-timestamp': '1' };
    expect(run(verify, request(stray))).toEqual({ ok: true, id: 'msg_svix' });
  });

  test('refusals of the svix set name its headers', () => {
    const { 'svix-signature': _, ...missing } = svixNames(signed);
    expect(run(verify, request(missing))).toEqual({
      ok: false,
      code: 'missing_header',
      detail: 'Missing header: svix-signature.',
    });
    const stale = { ...svixNames(signed), 'svix-timestamp': String(NOW - 301) };
    expect(verify.checkHeaders!(request(stale))).toMatchObject({
      code: 'stale_timestamp',
      detail: expect.stringMatching(/^The svix-timestamp/),
    });
  });

  test("secretForm 'utf8' keys a whsec_ secret by its text, as a sender that does so signs", () => {
    const textKeyed = new StandardWebhook(SECRET, { format: 'raw' }).sign(
      'msg_2',
      new Date(NOW * 1000),
      BODY,
    );
    const headers = {
      'webhook-id': 'msg_2',
      'webhook-timestamp': String(NOW),
      'webhook-signature': textKeyed,
    };
    expect(run(standardWebhooks({ secretForm: 'utf8' }).prepare([SECRET]), request(headers)).ok).toBe(true);
    expect(run(verify, request(headers))).toMatchObject({ ok: false, code: 'no_match' });
  });
});

describe('hmacSha256(): the GitHub-like family', () => {
  const github = hmacSha256({ header: 'x-hub-signature-256', prefix: 'sha256=' });

  test('verifies what @octokit/webhooks signs, and signs what it verifies', async () => {
    const octokit = new OctokitWebhooks({ secret: 'a-github-secret' });
    const headers = { 'x-hub-signature-256': await octokit.sign(BODY) };
    expect(run(github.prepare(['a-github-secret']), request(headers)).ok).toBe(true);
    const delivery = signDelivery({ secret: 'a-github-secret', payload: BODY, scheme: 'hmac-sha256' });
    expect(await octokit.verify(BODY, delivery.headers['x-hub-signature-256']!)).toBe(true);
  });

  test("secretForm 'utf8' keys a whsec_ secret by its text; the default decodes it", async () => {
    const octokit = new OctokitWebhooks({ secret: SECRET });
    const headers = { 'x-hub-signature-256': await octokit.sign(BODY) };
    const text = hmacSha256({ header: 'x-hub-signature-256', prefix: 'sha256=', secretForm: 'utf8' });
    expect(run(text.prepare([SECRET]), request(headers)).ok).toBe(true);
    expect(run(github.prepare([SECRET]), request(headers))).toMatchObject({ ok: false, code: 'no_match' });
  });

  test('refuses a malformed digest before the body', () => {
    const check = github.prepare(['k']).checkHeaders!;
    expect(check(request({ 'x-hub-signature-256': 'sha256=zz' }))).toMatchObject({
      code: 'malformed_header',
    });
    expect(check(request({}))).toMatchObject({ code: 'missing_header' });
  });
});

describe("stripeSignature(): Stripe's timestamped layout", () => {
  const stripe = new Stripe('sk_test_unused');
  const verify = stripeSignature().prepare([STRIPE_SECRET]);
  const header = (timestamp = NOW) =>
    stripe.webhooks.generateTestHeaderString({ payload: BODY, secret: STRIPE_SECRET, timestamp });

  test('verifies what the stripe package signs (its whsec_ secret used as text)', () => {
    const headers = { 'stripe-signature': header() };
    expect(run(verify, request(headers))).toEqual({ ok: true });
    expect(verify.checkHeaders!(request(headers))).toBeUndefined();
    expect(run(verify, request(headers, `${BODY} `))).toMatchObject({ ok: false, code: 'no_match' });
    expect(run(stripeSignature().prepare(['whsec_other']), request(headers))).toMatchObject({
      ok: false,
      code: 'no_match',
    });
  });

  test("signDelivery({ scheme: 'stripe' }) signs what the stripe package verifies", () => {
    const delivery = signDelivery({ secret: STRIPE_SECRET, payload: BODY, scheme: 'stripe' });
    const event = stripe.webhooks.constructEvent(BODY, delivery.headers['stripe-signature']!, STRIPE_SECRET);
    expect(event).toEqual(JSON.parse(BODY));
  });

  test('any one valid v1 among several passes; v0 and other schemes are ignored', () => {
    const valid = header().split(',')[1]!;
    const rotated = `t=${NOW},v0=${'0'.repeat(64)},v1=${'a'.repeat(64)},${valid}`;
    expect(run(verify, request({ 'stripe-signature': rotated })).ok).toBe(true);
  });

  test('a custom header name', () => {
    const scheme = stripeSignature({ header: 'X-Timestamped-Signature' });
    const delivery = signDelivery({ secret: STRIPE_SECRET, payload: BODY, scheme, timestamp: NOW });
    expect(Object.keys(delivery.headers)).toContain('x-timestamped-signature');
    expect(run(scheme.prepare([STRIPE_SECRET]), request(delivery.headers)).ok).toBe(true);
  });

  const v1 = `v1=${'a'.repeat(64)}`;
  test.each([
    ['no header', {}, 'missing_header', /Missing header: stripe-signature/],
    ['no timestamp', { 'stripe-signature': v1 }, 'malformed_header', /no t=/],
    ['a timestamp that is not seconds', { 'stripe-signature': `t=1.8e9,${v1}` }, 'malformed_header', /no t=/],
    ['two timestamps', { 'stripe-signature': `t=${NOW},t=${NOW},${v1}` }, 'malformed_header', /two/],
    [
      'no v1',
      { 'stripe-signature': `t=${NOW},v0=${'a'.repeat(64)}` },
      'malformed_header',
      /no well-formed v1/,
    ],
    ['a short v1', { 'stripe-signature': `t=${NOW},v1=abc` }, 'malformed_header', /no well-formed v1/],
    [
      'more than 32 entries',
      { 'stripe-signature': [`t=${NOW}`, ...Array(32).fill(v1)].join(',') },
      'malformed_header',
      /at most 32/,
    ],
    ['an old timestamp', { 'stripe-signature': `t=${NOW - 301},${v1}` }, 'stale_timestamp', /tolerance/],
    ['a future timestamp', { 'stripe-signature': `t=${NOW + 301},${v1}` }, 'stale_timestamp', /tolerance/],
  ])('refuses %s with a closed code, before the body as after', (_name, headers, code, detail) => {
    const refusal = { ok: false, code, detail: expect.stringMatching(detail) };
    expect(run(verify, request(headers))).toEqual(refusal);
    expect(verify.checkHeaders!(request(headers))).toEqual(refusal);
  });

  test('the timestamp edges pass both ways; told the headers were checked, it is not judged again', () => {
    for (const offset of [-300, 300]) {
      expect(run(verify, request({ 'stripe-signature': header(NOW + offset) })).ok).toBe(true);
    }
    const late = request({ 'stripe-signature': header() }, BODY, (NOW + 3600) * 1000);
    expect(run(verify, late)).toMatchObject({ code: 'stale_timestamp' });
    expect(run(verify, { ...late, headersChecked: true })).toEqual({ ok: true });
  });

  test('a receiver with the preset refuses an unsigned upload before reading its body', async () => {
    const receiver = createReceiver({
      secret: STRIPE_SECRET,
      verifier: stripeSignature(),
      now: () => NOW * 1000,
    });
    let read = false;
    const refused = await receiver.receive({
      headers: { 'stripe-signature': `t=${NOW}` },
      body: () => ((read = true), Promise.resolve(Buffer.from(BODY))),
    });
    expect(refused.status).toBe(401);
    expect(read).toBe(false);
    const accepted = await receiver.receive({ headers: { 'stripe-signature': header() }, body: BODY });
    expect(accepted.status).toBe(200);
  });
});
