// signDelivery({ scheme }) signs in every family, by name or with parameters: each delivery is
// verified by the preset of its family and refused by the others, through a real receiver.
import { describe, expect, test } from 'vitest';
import { createReceiver, hmacSha256, standardWebhooks, stripeSignature } from 'jobhook';
import type { Verifier } from 'jobhook/extend';
import { signDelivery, type Signing } from 'jobhook/testing';
import { signDelivery as signDeliveryOnWeb } from '../../src/testing/web.js';
import { completedPayload, SECRET } from '../fixtures.js';

/** The verifier of each family, as a receiver of that contract is written. */
const PRESETS: Record<string, Verifier> = {
  'standard-webhooks': standardWebhooks(),
  'hmac-sha256': hmacSha256({ header: 'x-hub-signature-256', prefix: 'sha256=' }),
  stripe: stripeSignature(),
};

async function answer(verifier: Verifier, delivery: ReturnType<typeof signDelivery>) {
  const receiver = createReceiver({ secret: SECRET, verifier });
  return (await receiver.receive({ headers: delivery.headers, body: delivery.body })).status;
}

describe('signDelivery in each family', () => {
  test.each([
    ['standard-webhooks', 'standard-webhooks', ['webhook-id', 'webhook-timestamp', 'webhook-signature']],
    ['svix', 'standard-webhooks', ['svix-id', 'svix-timestamp', 'svix-signature']],
    ['hmac-sha256', 'hmac-sha256', ['x-hub-signature-256']],
    ['stripe', 'stripe', ['stripe-signature']],
  ] as const)('%s: verified by its preset only', async (scheme, preset, names) => {
    const delivery = signDelivery({ secret: SECRET, payload: completedPayload(), scheme });
    expect(Object.keys(delivery.headers).sort()).toEqual(['content-type', ...names].sort());
    for (const [name, verifier] of Object.entries(PRESETS)) {
      expect([name, await answer(verifier, delivery)]).toEqual([name, name === preset ? 200 : 401]);
    }
  });

  test("'unsigned' sends no signature, and every preset refuses it", async () => {
    const delivery = signDelivery({ secret: SECRET, payload: completedPayload(), scheme: 'unsigned' });
    expect(delivery.headers).toEqual({ 'content-type': 'application/json' });
    for (const verifier of Object.values(PRESETS)) expect(await answer(verifier, delivery)).toBe(401);
  });

  test('`family`, the old name of `scheme`, still names one (deprecated, for one version)', async () => {
    const old: Signing = { family: 'stripe', header: 'x-timestamped' };
    const delivery = signDelivery({ secret: SECRET, payload: completedPayload(), scheme: old });
    expect(Object.keys(delivery.headers)).toContain('x-timestamped');
    expect(await answer(stripeSignature({ header: 'x-timestamped' }), delivery)).toBe(200);
    expect(() =>
      signDelivery({ secret: SECRET, payload: {}, scheme: { scheme: 'stripe', family: 'stripe' } as never }),
    ).toThrow(/signDelivery's `scheme` has no option `family`/);
  });

  test('parameters: header, prefix, encoding, secret form and an id header', async () => {
    const scheme: Signing = {
      scheme: 'hmac-sha256',
      header: 'X-Signature',
      prefix: '',
      encoding: 'base64',
      secretForm: 'utf8',
      idHeader: 'X-Delivery-Id',
    };
    const delivery = signDelivery({ secret: SECRET, payload: completedPayload(), scheme, id: 'dlv_1' });
    expect(delivery.headers).toEqual({
      'content-type': 'application/json',
      'x-delivery-id': 'dlv_1',
      'x-signature': expect.stringMatching(/^[A-Za-z0-9+/]{43}=$/),
    });
    const matching = hmacSha256({ header: 'x-signature', encoding: 'base64', secretForm: 'utf8' });
    expect(await answer(matching, delivery)).toBe(200);
    expect(await answer(hmacSha256({ header: 'x-signature', encoding: 'base64' }), delivery)).toBe(401);
  });

  test('a stripe secret form of whsec-base64 is verified by the preset told the same', async () => {
    const scheme: Signing = { scheme: 'stripe', header: 'x-timestamped', secretForm: 'whsec-base64' };
    const delivery = signDelivery({ secret: SECRET, payload: completedPayload(), scheme });
    const told = stripeSignature({ header: 'x-timestamped', secretForm: 'whsec-base64' });
    expect(await answer(told, delivery)).toBe(200);
    expect(await answer(stripeSignature({ header: 'x-timestamped' }), delivery)).toBe(401);
  });

  test('a Verifier still signs, as before', async () => {
    const scheme = hmacSha256({ header: 'x-sig' });
    const delivery = signDelivery({ secret: SECRET, payload: completedPayload(), scheme });
    expect(Object.keys(delivery.headers).sort()).toEqual(['content-type', 'x-sig']);
    expect(await answer(scheme, delivery)).toBe(200);
  });

  test('a Verifier that signs with a promise: refused on Node, awaited by the Web build', async () => {
    const sync = hmacSha256({ header: 'x-sig' });
    const scheme: Verifier = {
      name: 'async',
      prepare: (s) => sync.prepare(s),
      sign: async (i) => sync.sign!(i),
    };
    expect(() => signDelivery({ secret: SECRET, payload: {}, scheme })).toThrow(
      /signDelivery: `scheme` must be a scheme that signs synchronously on this runtime/,
    );
    const delivery = await signDeliveryOnWeb({ secret: SECRET, payload: completedPayload(), scheme });
    expect(Object.keys(delivery.headers).sort()).toEqual(['content-type', 'x-sig']);
    expect(await answer(sync, delivery)).toBe(200);
  });

  test('an unknown family or parameter is refused, naming the option', () => {
    const sign = (scheme: unknown) => () =>
      signDelivery({ secret: SECRET, payload: {}, scheme: scheme as Signing });
    expect(sign('github')).toThrow(/signDelivery: `scheme` must be a signing scheme/);
    expect(sign({ scheme: 'svix', header: 'x' })).toThrow(/signDelivery's `scheme` has no option `header`/);
    expect(sign({ scheme: 'stripe', header: 'bad header' })).toThrow(
      /signDelivery: `scheme.header` must be an HTTP header name/,
    );
  });
});
