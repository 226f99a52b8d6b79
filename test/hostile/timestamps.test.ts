// The timestamp tolerance at its exact edges, both ways, and replays of a captured delivery,
// through every adapter target over HTTP with the receiver's clock set by the test.
import { createReceiver } from 'jobhook';
import { signDelivery } from 'jobhook/testing';
import { afterEach, describe, expect, test } from 'vitest';
import { completed, SECRET } from '../adapters/fixtures.js';
import type { Running } from '../adapters/http.js';
import { PATH, targets } from '../adapters/targets.js';
import { postOnce } from './upload.js';

const SIGNED_AT = 1_800_000_000; // Unix seconds
const TOLERANCE_MS = 300_000; // the default 300 s

function clockedReceiver() {
  const clock = { now: SIGNED_AT * 1000 };
  const handled: string[] = [];
  const receiver = createReceiver({
    secret: SECRET,
    now: () => clock.now,
    logger: { error: () => undefined },
  });
  receiver.onAny((_event, { deliveryId }) => void handled.push(deliveryId!));
  return { receiver, clock, handled };
}

describe.each(targets)('timestamps: $name', (target) => {
  let server: Running | undefined;
  afterEach(() => server?.close());

  test.each([
    { offsetMs: TOLERANCE_MS, status: 200, edge: 'signed exactly 300 s ago' },
    { offsetMs: TOLERANCE_MS + 1, status: 401, edge: 'signed 300.001 s ago' },
    { offsetMs: -TOLERANCE_MS, status: 200, edge: 'signed exactly 300 s ahead' },
    { offsetMs: -TOLERANCE_MS - 1, status: 401, edge: 'signed 300.001 s ahead' },
    { offsetMs: 0, status: 200, edge: 'signed now' },
  ])('a delivery $edge is answered $status', async ({ offsetMs, status }) => {
    const { receiver, clock, handled } = clockedReceiver();
    server = await target.start(receiver);
    const delivery = signDelivery({ secret: SECRET, payload: completed(), timestamp: SIGNED_AT });
    clock.now = SIGNED_AT * 1000 + offsetMs;
    const answer = await postOnce(`${server.origin}${PATH}`, delivery.headers, delivery.body);
    expect(answer.status).toBe(status);
    expect(handled).toEqual(status === 200 ? [delivery.id] : []);
    if (status === 401) expect(answer.body).toContain('tolerance');
  });

  test('a captured delivery replayed after it was handled: 200 without running again, then 401 once stale', async () => {
    const { receiver, clock, handled } = clockedReceiver();
    server = await target.start(receiver);
    const url = `${server.origin}${PATH}`;
    const captured = signDelivery({ secret: SECRET, payload: completed(), timestamp: SIGNED_AT });
    const replay = () => postOnce(url, captured.headers, captured.body);

    expect((await replay()).status).toBe(200);
    expect(handled).toEqual([captured.id]);

    clock.now = SIGNED_AT * 1000 + 60_000;
    const again = await replay();
    expect(again.status).toBe(200);
    expect(JSON.parse(again.body)).toEqual({ ok: true, duplicate: true });

    clock.now = SIGNED_AT * 1000 + TOLERANCE_MS;
    expect(JSON.parse((await replay()).body)).toEqual({ ok: true, duplicate: true });

    clock.now = SIGNED_AT * 1000 + TOLERANCE_MS + 1;
    const stale = await replay();
    expect(stale.status).toBe(401);
    expect(JSON.parse(stale.body)).toMatchObject({ error: { code: 'invalid_signature' } });
    expect(handled).toEqual([captured.id]);
  });

  test('a replay outside the tolerance is refused even by a receiver that never saw it (a restart)', async () => {
    const { receiver, clock, handled } = clockedReceiver();
    server = await target.start(receiver);
    const captured = signDelivery({ secret: SECRET, payload: completed(), timestamp: SIGNED_AT });
    clock.now = SIGNED_AT * 1000 + 24 * 3600 * 1000;
    const stale = await postOnce(`${server.origin}${PATH}`, captured.headers, captured.body);
    expect(stale.status).toBe(401);
    expect(handled).toEqual([]);
  });
});
