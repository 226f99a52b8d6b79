// Issue 23.6: what jobhook hands to onError never carries the secret. A handler or a dedupe store
// whose error quotes the secret gets a JobhookError whose message and stack are redacted; the
// cause is the value as it was thrown (the app's own, documented as not redacted).
import { createReceiver, type JobhookError } from 'jobhook';
import type { DedupeStore } from 'jobhook/extend';
import { signDelivery } from 'jobhook/testing';
import { describe, expect, it } from 'vitest';
import { completedPayload, SECRET } from '../support/deliveries.js';

const KEY_BASE64 = SECRET.slice('whsec_'.length);

function expectNoSecret(error: JobhookError) {
  for (const text of [error.message, error.stack ?? '']) {
    expect(text).not.toContain(SECRET);
    expect(text).not.toContain(KEY_BASE64);
  }
  expect(error.message).toContain('[redacted]');
}

describe('onError never gets the secret in what jobhook wraps', () => {
  it('from a handler whose error quotes it', async () => {
    const errors: JobhookError[] = [];
    const receiver = createReceiver({ secret: SECRET })
      .onJobCompleted(() => {
        throw new Error(`could not use ${SECRET} (key ${KEY_BASE64})`);
      })
      .onError((error) => void errors.push(error));
    const answer = await receiver.receive(signDelivery({ secret: SECRET, payload: completedPayload() }));
    expect(answer.status).toBe(500);
    expect(errors.map((error) => error.code)).toEqual(['handler_failed']);
    expectNoSecret(errors[0]!);
  });

  it('from a dedupe store whose error quotes it', async () => {
    const errors: JobhookError[] = [];
    const store: DedupeStore = {
      leaseMs: 30_000,
      claim: () => Promise.reject(new Error(`AUTH failed for ${SECRET}`)),
      renew: () => true,
      complete: () => {},
      release: () => {},
    };
    const receiver = createReceiver({ secret: SECRET, dedupe: store })
      .onJobCompleted(() => {})
      .onError((error) => void errors.push(error));
    const answer = await receiver.receive(signDelivery({ secret: SECRET, payload: completedPayload() }));
    expect(answer.status).toBe(500);
    expect(errors.map((error) => error.code)).toEqual(['dedupe_store_failed']);
    expectNoSecret(errors[0]!);
  });
});
