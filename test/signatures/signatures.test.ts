import { createHmac } from 'node:crypto';
import { Webhook } from 'standardwebhooks';
import { describe, expect, test } from 'vitest';
import { createReceiver, hmacSha256, standardWebhooks } from 'jobhook';
import type { SignedRequest, VerifyOutcome } from 'jobhook/extend';
import { signDelivery } from 'jobhook/testing';
import { completedPayload, SECRET } from '../fixtures.js';

const NOW = 1_800_000_000;

function request(
  headers: Record<string, string>,
  body: string | Uint8Array,
  now = NOW * 1000,
): SignedRequest {
  return {
    headers: { get: (name) => headers[name] },
    body: typeof body === 'string' ? Buffer.from(body) : body,
    now,
    toleranceSeconds: 300,
  };
}

// Both built-in schemes verify synchronously.
const verify = (secrets: string[], req: SignedRequest) =>
  standardWebhooks().prepare(secrets)(req) as VerifyOutcome;

describe('standardWebhooks()', () => {
  test('verifies the Standard Webhooks known-answer vector', () => {
    const headers = {
      'webhook-id': 'msg_p5jXN8AQM9LWM0D4loKWxJek',
      'webhook-timestamp': '1614265330',
      'webhook-signature': 'v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=',
    };
    const req = request(headers, '{"test": 2432232314}', 1614265330 * 1000);
    expect(verify(['whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw'], req)).toEqual({
      ok: true,
      id: 'msg_p5jXN8AQM9LWM0D4loKWxJek',
    });
    expect(verify(['whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSx'], req).ok).toBe(false);
  });

  test('verifies deliveries signed by the published standardwebhooks package (whsec_ secret)', () => {
    const body = JSON.stringify(completedPayload());
    const signature = new Webhook(SECRET).sign('msg_1', new Date(NOW * 1000), body);
    const req = request(
      { 'webhook-id': 'msg_1', 'webhook-timestamp': String(NOW), 'webhook-signature': signature },
      body,
    );
    expect(verify([SECRET], req)).toEqual({ ok: true, id: 'msg_1' });
  });

  test('uses a secret without the whsec_ prefix as its UTF-8 bytes, like standardwebhooks raw format', () => {
    const secret = 'gateway-secret-key';
    const body = JSON.stringify(completedPayload());
    const signature = new Webhook(secret, { format: 'raw' }).sign('msg_2', new Date(NOW * 1000), body);
    const req = request(
      { 'webhook-id': 'msg_2', 'webhook-timestamp': String(NOW), 'webhook-signature': signature },
      body,
    );
    expect(verify([secret], req).ok).toBe(true);
    expect(verify([`whsec_${Buffer.from(secret).toString('base64')}`], req).ok).toBe(true);
  });

  test('our signer produces deliveries the standardwebhooks package accepts', () => {
    const delivery = signDelivery({ secret: SECRET, payload: completedPayload() });
    expect(() => new Webhook(SECRET).verify(delivery.body as string, delivery.headers)).not.toThrow();
  });

  test('a body that is not valid UTF-8 verifies when signed over its bytes', () => {
    const body = Buffer.from([0x7b, 0xff, 0xfe, 0x80, 0x7d]);
    const expected = createHmac('sha256', 'raw-secret').update(`msg_3.${NOW}.`).update(body).digest('base64');
    const headers = {
      'webhook-id': 'msg_3',
      'webhook-timestamp': String(NOW),
      'webhook-signature': `v1,${expected}`,
    };
    expect(verify(['raw-secret'], request(headers, body)).ok).toBe(true);
    expect(
      signDelivery({ secret: 'raw-secret', payload: body, id: 'msg_3', timestamp: NOW }).headers,
    ).toMatchObject(headers);
    // The same bytes decoded and re-encoded (what a body parser does) no longer verify.
    const reencoded = Buffer.from(body.toString('utf8'));
    expect(verify(['raw-secret'], request(headers, reencoded)).ok).toBe(false);
  });

  test('any one valid signature among several passes, and any one matching secret (rotation)', () => {
    const body = '{"type":"x"}';
    const old = signDelivery({ secret: 'old-secret', payload: body, id: 'msg_4', timestamp: NOW }).headers;
    const fresh = signDelivery({ secret: 'new-secret', payload: body, id: 'msg_4', timestamp: NOW }).headers;
    const both = {
      ...fresh,
      'webhook-signature': `v1a,ignored ${old['webhook-signature']} ${fresh['webhook-signature']}`,
    };
    expect(verify(['new-secret'], request(both, body)).ok).toBe(true);
    expect(verify(['old-secret'], request(both, body)).ok).toBe(true);
    expect(verify(['other', 'new-secret'], request(fresh, body)).ok).toBe(true);
    expect(verify(['other'], request(both, body)).ok).toBe(false);
    // Repeated headers joined by a proxy with ", " still parse.
    const joined = {
      ...fresh,
      'webhook-signature': `${old['webhook-signature']}, ${fresh['webhook-signature']}`,
    };
    expect(verify(['new-secret'], request(joined, body)).ok).toBe(true);
  });

  test('checks the timestamp tolerance in both directions, edges included', () => {
    const body = '{"type":"x"}';
    const at = (offset: number) => {
      const headers = signDelivery({ secret: 'k', payload: body, id: 'm', timestamp: NOW + offset }).headers;
      return verify(['k'], request(headers, body)).ok;
    };
    expect([at(-300), at(300), at(0)]).toEqual([true, true, true]);
    expect([at(-301), at(301)]).toEqual([false, false]);
  });

  test.each([
    ['no webhook-id', { 'webhook-id': '' }, 'missing_header', /webhook-id/],
    ['no signature', { 'webhook-signature': '' }, 'missing_header', /webhook-signature/],
    ['a timestamp that is not seconds', { 'webhook-timestamp': '1.5e9' }, 'malformed_header', /Unix seconds/],
    ['a negative timestamp', { 'webhook-timestamp': '-1' }, 'malformed_header', /Unix seconds/],
    ['a timestamp with a space', { 'webhook-timestamp': ` ${NOW}` }, 'malformed_header', /Unix seconds/],
    ['a timestamp in hex', { 'webhook-timestamp': '0x6553f100' }, 'malformed_header', /Unix seconds/],
    ['a timestamp of 13 digits', { 'webhook-timestamp': `000${NOW}` }, 'malformed_header', /Unix seconds/],
    [
      'a timestamp of other digits',
      { 'webhook-timestamp': '١٧٠٠٠٠٠٠٠٠' },
      'malformed_header',
      /Unix seconds/,
    ],
    ['a stale timestamp', { 'webhook-timestamp': String(NOW - 301) }, 'stale_timestamp', /tolerance/],
    ['no v1 entry', { 'webhook-signature': 'v2,abc' }, 'malformed_header', /no well-formed v1/],
    ['an empty v1 entry', { 'webhook-signature': 'v1,' }, 'malformed_header', /no well-formed v1/],
    ['a signature of the wrong length', { 'webhook-signature': 'v1,AAAA' }, 'malformed_header', /v1/],
    ['an overlong id', { 'webhook-id': 'x'.repeat(300) }, 'malformed_header', /too long/],
  ])('refuses %s with a closed code and a detail that names no secret', (_name, change, code, detail) => {
    const body = '{"type":"x"}';
    const headers = { ...signDelivery({ secret: SECRET, payload: body, timestamp: NOW }).headers, ...change };
    const outcome = verify([SECRET], request(headers, body));
    expect(outcome).toEqual({ ok: false, code, detail: expect.stringMatching(detail) });
    expect(JSON.stringify(outcome)).not.toContain(SECRET.slice(6));
    // The same refusal is found before the body is read.
    const check = standardWebhooks().prepare([SECRET]).checkHeaders!;
    expect(check(request(headers, body))).toEqual(outcome);
  });

  test('decodes signatures strictly, as the standardwebhooks package does', () => {
    const body = '{"type":"x"}';
    const headers = signDelivery({ secret: SECRET, payload: body, timestamp: NOW }).headers;
    const valid = headers['webhook-signature']!.slice(3);
    const urlSafe = valid.replaceAll('+', '-').replaceAll('/', '_');
    const variants = [valid.replace(/=$/, ''), `${valid.slice(0, 20)}!${valid.slice(20)}`, `${valid}=`];
    if (urlSafe !== valid) variants.push(urlSafe);
    expect(verify([SECRET], request(headers, body)).ok).toBe(true);
    for (const variant of variants) {
      const outcome = verify([SECRET], request({ ...headers, 'webhook-signature': `v1,${variant}` }, body));
      expect(outcome).toMatchObject({ ok: false, code: 'malformed_header' });
    }
  });

  // The usual lone signature is checked as it is decoded (Buffer's lenient decoder on Node, with
  // checks of its own): each character swapped for one outside the alphabet, at the same length.
  test.each([
    ['a URL-safe "-"', '-'],
    ['a URL-safe "_"', '_'],
    ['a space', ' '],
    ['a tab', '\t'],
    ['a "*"', '*'],
    ['a "=" inside', '='],
    ['a non-ASCII letter', 'é'],
    ['a full-width letter', 'Ａ'],
  ])('refuses a lone signature of the usual length with %s, body in hand or not', (_name, char) => {
    const body = '{"type":"x"}';
    const headers = signDelivery({ secret: SECRET, payload: body, timestamp: NOW }).headers;
    const valid = headers['webhook-signature']!;
    const prepared = standardWebhooks().prepare([SECRET]);
    for (const at of [3, 20, 45]) {
      const signature = `${valid.slice(0, at)}${char}${valid.slice(at + 1)}`;
      expect(signature).toHaveLength(valid.length);
      const tampered = request({ ...headers, 'webhook-signature': signature }, body);
      const refusal = {
        ok: false,
        code: 'malformed_header',
        detail: expect.stringMatching(/no well-formed v1/),
      };
      expect(prepared(tampered)).toEqual(refusal);
      expect(prepared.checkHeaders!(tampered)).toEqual(refusal);
    }
  });

  test('told the headers were checked, skips only those checks: the signature is still compared', () => {
    const body = '{"type":"x"}';
    const headers = signDelivery({ secret: SECRET, payload: body, timestamp: NOW }).headers;
    const prepared = standardWebhooks().prepare([SECRET]);
    // A timestamp far off is not looked at again (the receiver checked it when the headers came)...
    const later = (NOW + 3600) * 1000;
    expect(prepared(request(headers, body, later))).toMatchObject({ ok: false, code: 'stale_timestamp' });
    expect(prepared({ ...request(headers, body, later), headersChecked: true })).toEqual({
      ok: true,
      id: headers['webhook-id'],
    });
    // ...but a body or a signature that does not match is refused all the same.
    expect(prepared({ ...request(headers, `${body} `), headersChecked: true })).toMatchObject({
      ok: false,
      code: 'no_match',
    });
    const forged = { ...headers, 'webhook-signature': `v1,${Buffer.alloc(32).toString('base64')}` };
    expect(prepared({ ...request(forged, body), headersChecked: true })).toMatchObject({
      ok: false,
      code: 'no_match',
    });
  });

  test('the receiver says the headers were checked only when its pre-check ran and passed', async () => {
    const seen: (boolean | undefined)[] = [];
    const inner = standardWebhooks();
    const spy = {
      name: 'spy',
      prepare(secrets: readonly string[]) {
        const verify = inner.prepare(secrets);
        const wrapped = (req: SignedRequest) => {
          seen.push(req.headersChecked);
          return verify(req);
        };
        return Object.assign(wrapped, { checkHeaders: verify.checkHeaders });
      },
    };
    const receiver = createReceiver({ secret: SECRET, verifier: spy, now: () => NOW * 1000 });
    const body = JSON.stringify(completedPayload());
    const { headers } = signDelivery({ secret: SECRET, payload: body, timestamp: NOW });
    expect((await receiver.receive({ headers, body })).status).toBe(200);
    const lazy = await receiver.receive({ headers, body: () => Promise.resolve(Buffer.from(body)) });
    expect(lazy.status).toBe(200);
    // A stale delivery read lazily is refused before its body is read, and never reaches verify.
    let read = false;
    const stale = signDelivery({ secret: SECRET, payload: body, timestamp: NOW - 3600 }).headers;
    const refused = await receiver.receive({
      headers: stale,
      body: () => ((read = true), Promise.resolve(Buffer.from(body))),
    });
    expect(refused.status).toBe(401);
    expect(read).toBe(false);
    expect(seen).toEqual([undefined, true]);
  });

  test('refuses a whsec_ secret that is not base64, without echoing it', () => {
    expect(() => createReceiver({ secret: 'whsec_not base64!' })).toThrow(/base64/);
    expect(() => createReceiver({ secret: 'whsec_not base64!' })).not.toThrow(/not base64!/);
  });
});

describe('hmacSha256()', () => {
  const body = JSON.stringify(completedPayload());
  const hex = createHmac('sha256', 'shh').update(body).digest('hex');
  const b64 = createHmac('sha256', 'shh').update(body).digest('base64');

  test('verifies a hex digest with a prefix, in a header of any case', () => {
    const prepared = hmacSha256({ header: 'X-Hub-Signature-256', prefix: 'sha256=' }).prepare(['shh']);
    const run = (req: SignedRequest) => prepared(req) as VerifyOutcome;
    expect(run(request({ 'x-hub-signature-256': `sha256=${hex}` }, body)).ok).toBe(true);
    expect(run(request({ 'x-hub-signature-256': `sha256=${hex.toUpperCase()}` }, body)).ok).toBe(true);
    expect(run(request({ 'x-hub-signature-256': hex }, body)).ok).toBe(false);
    expect(run(request({ 'x-hub-signature-256': `sha256=${hex}` }, `${body} `)).ok).toBe(false);
    expect(run(request({}, body))).toEqual({
      ok: false,
      code: 'missing_header',
      detail: expect.stringMatching(/Missing header/),
    });
  });

  test('verifies a base64 digest, and signs what it verifies', () => {
    const scheme = hmacSha256({ header: 'x-signature', encoding: 'base64' });
    const prepared = scheme.prepare(['wrong', 'shh']);
    const run = (req: SignedRequest) => prepared(req) as VerifyOutcome;
    expect(run(request({ 'x-signature': b64 }, body)).ok).toBe(true);
    expect(scheme.sign!({ secret: 'shh', body, id: 'unused', timestamp: 0 })).toEqual({ 'x-signature': b64 });
    expect(run(request({ 'x-signature': hex }, body)).ok).toBe(false);
  });

  test('needs a header name', () => {
    expect(() => hmacSha256({ header: '' })).toThrow(/header/);
  });
});
