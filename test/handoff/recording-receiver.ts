// What the work tests of every engine share: a receiver on a hand-off that records the events its
// worker runs, and the matcher of an `invalid_options` refusal.
import { expect } from 'vitest';
import { createReceiver, type JobhookError } from 'jobhook';
import type { Handoff } from 'jobhook/extend';
import { signDelivery } from 'jobhook/testing';
import { completedPayload, SECRET } from '../fixtures.js';

/** A receiver that hands off to `handoff`; `deliver()` receives a fresh signed event and gives its id. */
export function recordingReceiver(handoff: Handoff) {
  const ran: string[] = [];
  const receiver = createReceiver({ secret: SECRET, handoff }).onJobCompleted(
    (event) => void ran.push(event.id),
  );
  const deliver = async () => {
    const payload = completedPayload();
    const delivery = signDelivery({ secret: SECRET, payload });
    expect((await receiver.receive({ headers: delivery.headers, body: delivery.body })).status).toBe(200);
    return payload.id;
  };
  return { receiver, ran, deliver };
}

/** A JobhookError `invalid_options` whose message matches `pattern`. */
export const invalidOptions = (pattern: RegExp) =>
  expect.objectContaining({
    code: 'invalid_options',
    message: expect.stringMatching(pattern),
  }) as JobhookError;
