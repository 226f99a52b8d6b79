// Random mutations of a valid delivery are never dispatched and never answered 5xx.
import fc from 'fast-check';
import { expect, test } from 'vitest';
import { createReceiver } from 'jobhook';
import { signDelivery } from 'jobhook/testing';
import { completedPayload, SECRET } from '../support/deliveries.js';

const NOW = 1_800_000_000;
// JOBHOOK_SEED=<seed> replays a failing run.
const replay = process.env.JOBHOOK_SEED ? { seed: Number(process.env.JOBHOOK_SEED) } : {};

interface Delivery {
  headers: Record<string, string>;
  body: Uint8Array;
}

// Each mutation always changes what was signed (or how), so none of them can leave a valid delivery.
const mutation: fc.Arbitrary<(d: Delivery) => Delivery> = fc.oneof(
  fc.record({ at: fc.nat(), xor: fc.integer({ min: 1, max: 255 }) }).map(({ at, xor }) => (d: Delivery) => {
    const body = Uint8Array.from(d.body);
    body[at % body.length]! ^= xor;
    return { ...d, body };
  }),
  fc.uint8Array({ minLength: 1, maxLength: 8 }).map((extra) => (d: Delivery) => ({
    ...d,
    body: Buffer.concat([d.body, extra]),
  })),
  fc.nat().map((cut) => (d: Delivery) => ({ ...d, body: d.body.subarray(0, cut % d.body.length) })),
  fc.constantFrom('webhook-id', 'webhook-timestamp', 'webhook-signature').map((name) => (d: Delivery) => {
    const headers = { ...d.headers };
    delete headers[name];
    return { ...d, headers };
  }),
  fc.string({ minLength: 1 }).map((suffix) => (d: Delivery) => ({
    ...d,
    headers: { ...d.headers, 'webhook-id': d.headers['webhook-id'] + suffix },
  })),
  fc
    .oneof(
      fc.integer({ min: 301, max: 10 ** 9 }).map((shift) => String(NOW + shift)),
      fc.integer({ min: 301, max: NOW }).map((shift) => String(NOW - shift)),
      fc.string(),
    )
    .map((timestamp) => (d: Delivery) => ({
      ...d,
      headers: { ...d.headers, 'webhook-timestamp': timestamp },
    })),
  fc
    .oneof(
      fc
        .uint8Array({ minLength: 32, maxLength: 32 })
        .map((bytes) => `v1,${Buffer.from(bytes).toString('base64')}`),
      fc.string(),
      fc.constantFrom('v1,', 'v1', ' ', 'v2,AAAA', 'v1,====', 't=1,v1=abc'),
    )
    .map((signature) => (d: Delivery) => ({
      ...d,
      headers: { ...d.headers, 'webhook-signature': signature },
    })),
);

function sameDelivery(a: Delivery, b: Delivery): boolean {
  const names = new Set([...Object.keys(a.headers), ...Object.keys(b.headers)]);
  return (
    Buffer.from(a.body).equals(b.body) && [...names].every((name) => a.headers[name] === b.headers[name])
  );
}

test('mutated deliveries are never dispatched and never answered 5xx', async () => {
  const receiver = createReceiver({
    secret: SECRET,
    now: () => NOW * 1000,
    logger: { error: () => undefined },
  });
  let dispatched = 0;
  receiver.onAny(() => void dispatched++);

  await fc.assert(
    fc.asyncProperty(fc.array(mutation, { minLength: 1, maxLength: 3 }), async (mutations) => {
      const signed = signDelivery({ secret: SECRET, payload: completedPayload(), timestamp: NOW });
      const original: Delivery = { headers: signed.headers, body: Buffer.from(signed.body) };
      const mutated = mutations.reduce((d, mutate) => mutate(d), original);
      // Two mutations can cancel out (the same byte flipped twice, bytes appended then cut off):
      // what is left is the valid delivery, which is rightly accepted, so it is not a case here.
      fc.pre(!sameDelivery(mutated, original));
      const response = await receiver.receive(mutated);
      expect([400, 401]).toContain(response.status);
      expect(dispatched).toBe(0);
    }),
    { numRuns: 2000, ...replay },
  );
  // The same receiver does dispatch the unmutated delivery: the property is not vacuous.
  const valid = signDelivery({ secret: SECRET, payload: completedPayload(), timestamp: NOW });
  expect((await receiver.receive(valid)).status).toBe(200);
  expect(dispatched).toBe(1);
});

test('arbitrary headers and bytes are never dispatched and never answered 5xx', async () => {
  const receiver = createReceiver({
    secret: SECRET,
    now: () => NOW * 1000,
    logger: { error: () => undefined },
  });
  let dispatched = 0;
  receiver.onAny(() => void dispatched++);
  const headerValue = fc.oneof(fc.string(), fc.array(fc.string(), { maxLength: 3 }));
  await fc.assert(
    fc.asyncProperty(
      fc.dictionary(
        fc.oneof(
          fc.constantFrom('webhook-id', 'webhook-timestamp', 'webhook-signature', 'Webhook-Signature'),
          fc.string(),
        ),
        headerValue,
      ),
      fc.oneof(fc.uint8Array({ maxLength: 512 }), fc.string({ maxLength: 512 }), fc.json()),
      fc.constantFrom(undefined, 'POST', 'post', 'GET', 'PATCH'),
      async (headers, body, method) => {
        const response = await receiver.receive({ method, headers, body });
        expect(response.status).toBeGreaterThanOrEqual(400);
        expect(response.status).toBeLessThan(500);
      },
    ),
    { numRuns: 2000, ...replay },
  );
  expect(dispatched).toBe(0);
});
