// startGateway({ signing }): the simulator's deliveries in each family of signature, each verified
// by the preset of its family and refused by the others, as a receiver of that contract would.
import { describe, expect, test } from 'vitest';
import { createReceiver, hmacSha256, standardWebhooks, stripeSignature } from 'jobhook';
import type { Verifier } from 'jobhook/extend';
import type { Signing } from 'jobhook/testing';
import { call } from './support.js';
import { createWebhook, SECRET, sink, start, submit } from './delivery-support.js';

const PRESETS: Record<string, Verifier> = {
  'standard-webhooks': standardWebhooks(),
  'hmac-sha256': hmacSha256({ header: 'x-hub-signature-256', prefix: 'sha256=' }),
  stripe: stripeSignature(),
};

/** One delivery of a finished job, signed with `secret` as `signing` says. */
/** `secret`: null registers the webhook without a secret_key. */
async function deliveryIn(signing: Signing | Verifier, secret: string | null = SECRET) {
  const gateway = await start({ signing });
  const endpoint = await sink();
  await createWebhook(gateway, {
    url: endpoint.url,
    events: ['job.completed'],
    ...(secret !== null && { secret_key: secret }),
  });
  await submit(gateway);
  return endpoint.next();
}

async function status(verifier: Verifier, delivery: { headers: object; body: string }, secret = SECRET) {
  const receiver = createReceiver({ secret, verifier });
  const { headers, body } = delivery;
  return (await receiver.receive({ headers: headers as Record<string, string>, body })).status;
}

describe('the simulator signs in each family', () => {
  test.each([
    ['standard-webhooks', 'standard-webhooks', ['webhook-id', 'webhook-timestamp', 'webhook-signature']],
    ['svix', 'standard-webhooks', ['svix-id', 'svix-timestamp', 'svix-signature']],
    ['hmac-sha256', 'hmac-sha256', ['x-hub-signature-256']],
    ['stripe', 'stripe', ['stripe-signature']],
  ] as const)('%s: verified by its preset, refused by the others', async (signing, preset, names) => {
    const delivery = await deliveryIn(signing);
    const sent = Object.keys(delivery.headers).filter((name) => /^(webhook|svix|x-hub|stripe)-/.test(name));
    expect(sent.sort()).toEqual([...names].sort());
    for (const [name, verifier] of Object.entries(PRESETS)) {
      expect([name, await status(verifier, delivery)]).toEqual([name, name === preset ? 200 : 401]);
    }
  });

  test('unsigned: no signature whatever the secret_key; every preset refuses it', async () => {
    const delivery = await deliveryIn('unsigned');
    expect(Object.keys(delivery.headers).filter((name) => /signature|webhook-|svix-/.test(name))).toEqual([]);
    for (const verifier of Object.values(PRESETS)) expect(await status(verifier, delivery)).toBe(401);
  });

  test('svix without a secret_key still names the delivery: svix-id and svix-timestamp', async () => {
    const delivery = await deliveryIn('svix', null);
    expect(delivery.headers['svix-id']).toMatch(/^msg_/);
    expect(delivery.headers['svix-timestamp']).toMatch(/^\d+$/);
    expect(delivery.headers['svix-signature']).toBeUndefined();
  });

  test('parameters: a header of choice, base64 without prefix, the secret as text, an id header', async () => {
    const signing: Signing = {
      scheme: 'hmac-sha256',
      header: 'x-signature',
      prefix: '',
      encoding: 'base64',
      secretForm: 'utf8',
      idHeader: 'x-delivery-id',
    };
    const delivery = await deliveryIn(signing);
    expect(delivery.headers['x-delivery-id']).toMatch(/^msg_/);
    expect(delivery.headers['x-signature']).toMatch(/^[A-Za-z0-9+/]{43}=$/);
    const told = hmacSha256({ header: 'x-signature', encoding: 'base64', secretForm: 'utf8' });
    expect(await status(told, delivery)).toBe(200);
    expect(await status(hmacSha256({ header: 'x-signature', encoding: 'base64' }), delivery)).toBe(401);
  });

  test('stripe keys a whsec_ secret by its text, as Stripe does; so a secret that is not base64 is accepted', async () => {
    const secret = 'whsec_not-base64!';
    const delivery = await deliveryIn('stripe', secret);
    expect(await status(stripeSignature(), delivery, secret)).toBe(200);
    // The standard family refuses such a secret at registration: it could never sign with it.
    const gateway = await start();
    const refused = await call(gateway.baseUrl, 'POST', '/api/v1/webhooks', {
      apiKey: gateway.apiKey,
      body: { url: 'https://example.com/hook', events: ['job.completed'], secret_key: secret },
    });
    expect(refused.status).toBe(400);
  });

  test('a Verifier given as signing signs every delivery', async () => {
    const scheme = hmacSha256({ header: 'x-custom-signature' });
    const delivery = await deliveryIn(scheme);
    expect(await status(scheme, delivery)).toBe(200);
  });

  test.each([['github'], [{ scheme: 'stripe', prefix: 'x' }], [{ scheme: 'nope' }], [7]])(
    'startGateway refuses signing %j, naming the option',
    async (signing) => {
      await expect(start({ signing: signing as Signing })).rejects.toThrow(/startGateway.*`signing/);
    },
  );
});
