// Load through every conformance target over real HTTP, 64 requests in flight on kept-alive
// connections: every valid delivery answered 200 and dispatched exactly once, counted per id;
// duplicates (10 %, some sent concurrently) dispatched once and answered 200 or 409.
// Counts: 5,000 deliveries per target and test (x JOBHOOK_STRESS). No timed assertions.
import { createReceiver } from 'jobhook';
import { signDelivery } from 'jobhook/testing';
import { afterEach, describe, expect, test } from 'vitest';
import { completed, failed, SECRET } from '../adapters/fixtures.js';
import type { Running } from '../adapters/http.js';
import { PATH, targets } from '../adapters/targets.js';
import {
  createSender,
  pool,
  scaled,
  STRESS,
  timeoutFor,
  type Outgoing,
  type Sender,
} from '../support/traffic.js';

const DELIVERIES = scaled(5_000);
const CONCURRENCY = 64;

// One target per adapter code path (Express 5 and 4, Hono, Node, the core's fetch) in `npm test`;
// every mounting variant under JOBHOOK_STRESS.
const PER_ADAPTER = [
  'express 5 app.post',
  'express 4 app.use',
  'hono app.post on @hono/node-server',
  'node http.createServer',
  'receiver.fetch on @hono/node-server',
];
const loadTargets = STRESS > 1 ? targets : targets.filter((t) => PER_ADAPTER.includes(t.name));

/** A receiver whose handlers count calls per delivery id, and yield once so that deliveries overlap. */
function countingReceiver() {
  const calls = new Map<string, number>();
  const receiver = createReceiver({ secret: SECRET, logger: { error: (line) => void errors.push(line) } });
  const errors: string[] = [];
  const count = async (_event: unknown, { deliveryId }: { deliveryId: string | undefined }) => {
    calls.set(deliveryId!, (calls.get(deliveryId!) ?? 0) + 1);
    await new Promise((resolve) => setImmediate(resolve));
  };
  receiver.onJobCompleted(count);
  receiver.onJobFailed(count);
  return { receiver, calls, errors };
}

function delivery(index: number): Outgoing & { id: string } {
  const payload = index % 5 === 0 ? failed() : completed();
  const signed = signDelivery({ secret: SECRET, payload });
  return { id: signed.id, path: PATH, headers: signed.headers, body: signed.body };
}

describe.each(loadTargets)('load: $name', (target) => {
  let server: Running | undefined;
  let sender: Sender | undefined;
  afterEach(async () => {
    sender?.close();
    await server?.close();
  });

  test(
    `${DELIVERIES} distinct deliveries at concurrency ${CONCURRENCY}: each answered 200 and dispatched once`,
    async () => {
      const { receiver, calls, errors } = countingReceiver();
      server = await target.start(receiver);
      sender = createSender(server.origin, CONCURRENCY);
      const deliveries = Array.from({ length: DELIVERIES }, (_, i) => delivery(i));
      const statuses = new Map<number, number>();
      await pool(deliveries, CONCURRENCY, async (d) => {
        const { status } = await sender!.send(d);
        statuses.set(status, (statuses.get(status) ?? 0) + 1);
      });
      expect(Object.fromEntries(statuses)).toEqual({ 200: DELIVERIES });
      expect(calls.size).toBe(DELIVERIES);
      for (const d of deliveries) expect(calls.get(d.id)).toBe(1);
      expect(errors).toEqual([]);
    },
    timeoutFor(60_000),
  );

  test(
    `${DELIVERIES} deliveries with 10 % sent twice, half of those concurrently: each dispatched once`,
    async () => {
      const { receiver, calls, errors } = countingReceiver();
      server = await target.start(receiver);
      sender = createSender(server.origin, CONCURRENCY);
      const deliveries = Array.from({ length: DELIVERIES }, (_, i) => delivery(i));
      // One delivery in ten goes twice: half of them back to back (both in flight together),
      // half again a little later, after the first has most likely been answered.
      const queue: { d: (typeof deliveries)[number]; copy: 'first' | 'concurrent' | 'later' }[] = [];
      const later: typeof queue = [];
      deliveries.forEach((d, i) => {
        queue.push({ d, copy: 'first' });
        if (i % 20 === 0) queue.push({ d, copy: 'concurrent' });
        if (i % 20 === 10) later.push({ d, copy: 'later' });
        if (i % 100 === 99) queue.push(...later.splice(0));
      });
      queue.push(...later.splice(0));
      const answers = new Map<string, { status: number; duplicate: boolean }[]>();
      await pool(queue, CONCURRENCY, async ({ d }) => {
        const { status, body } = await sender!.send(d);
        const list = answers.get(d.id) ?? [];
        list.push({ status, duplicate: (JSON.parse(body) as { duplicate?: boolean }).duplicate === true });
        answers.set(d.id, list);
      });

      const duplicates = queue.length - DELIVERIES;
      expect(duplicates).toBe(DELIVERIES / 10);
      let answered409 = 0;
      let answered200Duplicate = 0;
      for (const d of deliveries) {
        expect(calls.get(d.id)).toBe(1);
        const list = answers.get(d.id)!;
        // One answer per send; exactly one of them is the first, handled 200.
        expect(list.filter((a) => a.status === 200 && !a.duplicate)).toHaveLength(1);
        for (const a of list) expect([200, 409]).toContain(a.status);
        answered409 += list.filter((a) => a.status === 409).length;
        answered200Duplicate += list.filter((a) => a.status === 200 && a.duplicate).length;
      }
      expect(answered409 + answered200Duplicate).toBe(duplicates);
      expect(errors).toEqual([]);
      console.info(
        `[load] ${target.name}: ${queue.length} sent, ${calls.size} ids dispatched once each, ` +
          `duplicates answered 409 x${answered409}, 200 duplicate x${answered200Duplicate}`,
      );
    },
    timeoutFor(60_000),
  );
});
