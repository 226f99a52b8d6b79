// A receiver with an inbox, the same suite on every inbox (`receiverWithInbox(target)` in a test
// file): written before the 2xx, run from the inbox once, retried, refused ones kept, replayed.
import { randomUUID } from 'node:crypto';
import { createReceiver, type DeliveryContext, type ReceiverOptions } from 'jobhook';
import type { DedupeStore, Inbox, InboxOptions } from 'jobhook/extend';
import { signDelivery } from 'jobhook/testing';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { completedPayload, deferred, SECRET } from '../fixtures.js';

export interface InboxReceiverTarget {
  /** A fresh inbox (its own table or file) and a durable dedupe store beside it. */
  make(options?: InboxOptions): Promise<{ inbox: Inbox; dedupe: DedupeStore }>;
  /** Changes one byte of a stored delivery's body where the inbox keeps it. */
  tamper(inbox: Inbox, id: string): Promise<void>;
}

const WRONG_SECRET = `whsec_${Buffer.from('not-the-webhook-secret-012345678').toString('base64')}`;
const FAST_RETRY = { attempts: 3, firstMs: 20, maxMs: 40 };

/** Resolves once `check` holds, checking every few ms; the test's own time-out bounds it. */
async function eventually(check: () => boolean | Promise<boolean>): Promise<void> {
  while (!(await check())) await new Promise((resolve) => setTimeout(resolve, 10));
}

function signed(payload: Record<string, unknown>, secret = SECRET) {
  const { headers, body } = signDelivery({ secret, payload });
  return { headers, body, url: 'http://127.0.0.1/webhooks' };
}

const quiet = { warn: () => undefined, error: () => undefined };

export function receiverWithInbox(target: InboxReceiverTarget): void {
  async function receiverOn(options: InboxOptions = {}, extra: Partial<ReceiverOptions> = {}) {
    const { inbox, dedupe } = await target.make(options);
    const runs: { id: string; context: DeliveryContext }[] = [];
    const receiver = createReceiver({ secret: SECRET, inbox, dedupe, logger: quiet, ...extra });
    return { inbox, dedupe, runs, receiver };
  }

  describe('a receiver with an inbox', () => {
    it('answers 200 once the delivery is stored, then runs its handlers from the inbox once', async () => {
      const { inbox, receiver } = await receiverOn();
      const ran = deferred<DeliveryContext>();
      receiver.onJobCompleted((_event, context) => ran.resolve(context));
      const payload = completedPayload({ id: `evt_${randomUUID()}` });
      const answer = await receiver.receive(signed(payload));
      expect(answer.status).toBe(200);
      // Stored before the answer: the row was there when receive() resolved.
      const context = await ran.promise;
      expect(context).toMatchObject({ source: 'webhook', attempt: 1, type: 'job.completed' });
      await eventually(async () => (await inbox.list({ status: 'handled' })).length === 1);
      const [row] = await inbox.list();
      expect(row).toMatchObject({ status: 'handled', attempts: 1, type: 'job.completed' });
      expect(new TextDecoder().decode(row!.body)).toBe(JSON.stringify(payload));
      expect(row!.headers['webhook-signature']).toMatch(/^v1,/);
      expect(JSON.stringify(row)).not.toContain(SECRET);
      await receiver.close();
    });

    it('retries a failing handler with the back-off, counting attempts, then keeps it as failed', async () => {
      const { inbox, receiver } = await receiverOn({ retry: FAST_RETRY });
      const attempts: (number | undefined)[] = [];
      let fixed = false;
      receiver.onJobCompleted((_event, context) => {
        attempts.push(context.attempt);
        if (!fixed) throw new Error('not yet');
      });
      expect((await receiver.receive(signed(completedPayload({ id: `evt_${randomUUID()}` })))).status).toBe(
        200,
      );
      await eventually(async () => (await inbox.list({ status: 'failed' })).length === 1);
      expect(attempts).toEqual([1, 2, 3]);
      const [failed] = await inbox.list({ status: 'failed' });
      expect(failed).toMatchObject({ attempts: 3, reason: expect.stringContaining('handler_failed') });

      fixed = true;
      const report = await receiver.replay({ status: 'failed' });
      expect(report).toMatchObject({ handled: 1, refused: 0, failed: 0 });
      expect((await inbox.list({ ids: [failed!.id] }))[0]!.status).toBe('handled');
      await receiver.close();
    });

    it('runs on start what an earlier receiver stored and did not handle', async () => {
      const { inbox, dedupe } = await target.make();
      // No handler yet: nothing runs from the inbox, as when a process dies just after its 2xx.
      const first = createReceiver({ secret: SECRET, inbox, dedupe, logger: quiet });
      const payloads = Array.from({ length: 5 }, () => completedPayload({ id: `evt_${randomUUID()}` }));
      for (const payload of payloads) expect((await first.receive(signed(payload))).status).toBe(200);
      await first.close();
      expect(await inbox.list({ status: 'pending' })).toHaveLength(5);

      const seen: string[] = [];
      const second = createReceiver({ secret: SECRET, inbox, dedupe, logger: quiet });
      second.onJobCompleted((event) => void seen.push(event.id));
      await eventually(() => seen.length === 5);
      expect(seen.sort()).toEqual(payloads.map((payload) => payload.id).sort());
      await eventually(async () => (await inbox.list({ status: 'handled' })).length === 5);
      await second.close();
    });

    it('keeps refused deliveries with their reason: a wrong signature (401) and a bad payload (400)', async () => {
      const { inbox, receiver } = await receiverOn();
      receiver.onJobCompleted(() => undefined);
      expect((await receiver.receive(signed(completedPayload(), WRONG_SECRET))).status).toBe(401);
      const bad = signed({ id: 'evt_bad', type: 'job.completed', data: { task_id: 7 } });
      expect((await receiver.receive(bad)).status).toBe(400);
      await eventually(async () => (await inbox.list({ status: 'refused' })).length === 2);
      // Kept in the background: in either order.
      const reasons = (await inbox.list({ status: 'refused' })).map((row) => row.reason).sort();
      expect(reasons).toEqual([
        expect.stringMatching(/^400 .*invalid_payload/),
        expect.stringMatching(/^401 no_match/),
      ]);
      await receiver.close();
    });

    it('replays after a wrong secret: the 30 genuine deliveries run once each, none of the 10 forged', async () => {
      const { inbox, dedupe } = await target.make();
      // The receiver was given a wrong secret: every delivery is refused.
      const misconfigured = createReceiver({ secret: WRONG_SECRET, inbox, dedupe, logger: quiet });
      misconfigured.onJobCompleted(() => {
        throw new Error('never runs: nothing verifies');
      });
      const genuine = Array.from({ length: 30 }, () => completedPayload({ id: `evt_${randomUUID()}` }));
      const forgedSecret = `whsec_${Buffer.from(randomUUID().slice(0, 32)).toString('base64')}`;
      const forged = Array.from({ length: 10 }, () => completedPayload({ id: `evt_forged_${randomUUID()}` }));
      const mixed = [...genuine.map((p) => signed(p)), ...forged.map((p) => signed(p, forgedSecret))].sort(
        () => Math.random() - 0.5,
      );
      for (const delivery of mixed) expect((await misconfigured.receive(delivery)).status).toBe(401);
      await misconfigured.close();
      await eventually(async () => (await inbox.list({ status: 'refused' })).length === 40);

      // Fixed: the right secret, and a replay of what was refused.
      const fixed = createReceiver({ secret: SECRET, inbox, dedupe, logger: quiet });
      const ran: string[] = [];
      const sources = new Set<string>();
      fixed.onJobCompleted((event, context) => {
        ran.push(event.id);
        sources.add(context.source);
      });
      const report = await fixed.replay({ status: 'refused' });
      expect(report).toMatchObject({ handled: 30, refused: 10, duplicate: 0, failed: 0 });
      expect(ran.sort()).toEqual(genuine.map((p) => p.id).sort());
      expect([...sources]).toEqual(['replay']);
      expect(
        report.deliveries
          .filter((d) => d.outcome === 'refused')
          .every((d) => /^401 invalid_signature/.test(d.reason!)),
      ).toBe(true);
      // Again: handled already, so nothing runs twice; the forged ones are refused again.
      const again = await fixed.replay({ status: 'refused' });
      expect(again).toMatchObject({ handled: 0, refused: 10 });
      expect(ran).toHaveLength(30);
      await fixed.close();
    });

    it('replays hours later what a wrong secret refused, outside the timestamp window, once each', async () => {
      const { inbox, dedupe } = await target.make();
      const since = Date.now();
      const misconfigured = createReceiver({ secret: WRONG_SECRET, inbox, dedupe, logger: quiet });
      misconfigured.onJobCompleted(() => {
        throw new Error('never runs: nothing verifies');
      });
      const payloads = Array.from({ length: 5 }, () => completedPayload({ id: `evt_${randomUUID()}` }));
      // Signed now, with the timestamp the 5-minute window is checked against.
      const deliveries = payloads.map((payload) => signed(payload));
      for (const delivery of deliveries) expect((await misconfigured.receive(delivery)).status).toBe(401);
      await misconfigured.close();
      await eventually(async () => (await inbox.list({ status: 'refused' })).length === 5);

      // Fixed three hours later: every stored timestamp is far outside the window.
      const later = () => Date.now() + 3 * 60 * 60 * 1000;
      const fixed = createReceiver({ secret: SECRET, inbox, dedupe, logger: quiet, now: later });
      const ran: string[] = [];
      fixed.onJobCompleted((event, context) => void ran.push(`${event.id} ${context.source}`));
      const report = await fixed.replay({ status: 'refused', since });
      expect(report.deliveries.filter((d) => d.outcome !== 'handled')).toEqual([]);
      expect(report).toMatchObject({ handled: 5, refused: 0, duplicate: 0, failed: 0 });
      expect(ran.sort()).toEqual(payloads.map((payload) => `${payload.id} replay`).sort());
      // Once each: replayed again, every one is a duplicate of its first run.
      const ids = report.deliveries.map((d) => d.id);
      expect(await fixed.replay({ ids })).toMatchObject({ duplicate: 5, handled: 0 });
      expect(ran).toHaveLength(5);

      // The live door still holds the window: the same deliveries sent again now are stale.
      for (const delivery of deliveries) {
        const answer = await fixed.receive(delivery);
        expect(answer.status).toBe(401);
        expect(JSON.parse(answer.body).error.message).toMatch(/timestamp is outside the allowed tolerance/);
      }
      expect(ran).toHaveLength(5);
      await fixed.close();
    });

    it('replays after a contract change: the delivery refused 400 for its shape runs once', async () => {
      const { inbox, dedupe } = await target.make();
      // The gateway moved the image URL; jobhook's default schema refuses the payload.
      const moved = {
        id: `evt_${randomUUID()}`,
        type: 'job.completed',
        created_at: '2026-11-21T10:00:00Z',
        data: {
          task_id: `task_${randomUUID()}`,
          status: 'completed',
          output: { url: 'https://img.example/2.png' },
        },
      };
      const before = createReceiver({ secret: SECRET, inbox, dedupe, logger: quiet });
      before.onJobCompleted(() => {
        throw new Error('never runs: the payload does not pass');
      });
      const answer = await before.receive(signed(moved));
      expect(answer.status).toBe(400);
      expect(JSON.parse(answer.body).error.code).toBe('invalid_payload');
      // A forged delivery beside it, refused for its signature: it has no type, and stays refused.
      expect((await before.receive(signed(completedPayload(), WRONG_SECRET))).status).toBe(401);
      await before.close();
      await eventually(async () => (await inbox.list({ status: 'refused' })).length === 2);

      // The contract that reads the new shape, deployed; then the refused job.completed deliveries replayed.
      const after = createReceiver({
        secret: SECRET,
        inbox,
        dedupe,
        logger: quiet,
        contract: {
          signature: { scheme: 'standard-webhooks' },
          payload: {
            typePath: 'type',
            taskIdPath: 'data.task_id',
            imageUrlPath: 'data.output.url',
            eventIdPath: 'id',
            createdAtPath: 'created_at',
          },
        },
      });
      const ran: { id: string; image: string; source: string }[] = [];
      after.onJobCompleted((event, context) => {
        ran.push({ id: event.id, image: event.data.image_url, source: context.source });
      });
      const report = await after.replay({ status: 'refused', type: 'job.completed' });
      expect(report).toMatchObject({ handled: 1, refused: 0, duplicate: 0, failed: 0 });
      expect(ran).toEqual([{ id: moved.id, image: 'https://img.example/2.png', source: 'replay' }]);
      // Handled now: a second replay of what is refused runs nothing; the forged one is refused again.
      const again = await after.replay({ status: 'refused' });
      expect(again).toMatchObject({ handled: 0, duplicate: 0, refused: 1 });
      expect(ran).toHaveLength(1);
      await after.close();
    });

    it('replays after a schema change: the delivery the old schema refused runs once with the new one', async () => {
      const { inbox, dedupe } = await target.make();
      // A schema that wanted a field the gateway does not send.
      const strict = z.looseObject({
        id: z.string(),
        type: z.literal('job.completed'),
        data: z.looseObject({ task_id: z.string(), image_url: z.string(), seed: z.number() }),
      });
      const before = createReceiver({
        secret: SECRET,
        inbox,
        dedupe,
        logger: quiet,
        schemas: { 'job.completed': strict },
      });
      before.onJobCompleted(() => {
        throw new Error('never runs: the payload does not pass');
      });
      const payload = completedPayload({ id: `evt_${randomUUID()}` });
      const answer = await before.receive(signed(payload));
      expect(answer.status).toBe(400);
      expect(JSON.parse(answer.body).error.message).toMatch(/data\.seed/);
      await before.close();
      await eventually(async () => (await inbox.list({ status: 'refused' })).length === 1);
      const [row] = await inbox.list({ status: 'refused' });
      expect(row).toMatchObject({
        type: 'job.completed',
        reason: expect.stringMatching(/^400 .*invalid_payload/),
      });

      const corrected = strict.extend({
        data: z.looseObject({ task_id: z.string(), image_url: z.string(), seed: z.number().optional() }),
      });
      const after = createReceiver({
        secret: SECRET,
        inbox,
        dedupe,
        logger: quiet,
        schemas: { 'job.completed': corrected },
      });
      const ran: string[] = [];
      after.onJobCompleted((event, context) => void ran.push(`${event.id} ${context.source}`));
      expect(await after.replay({ status: 'refused' })).toMatchObject({ handled: 1, refused: 0 });
      expect(ran).toEqual([`${payload.id} replay`]);
      expect((await inbox.list({ ids: [row!.id] }))[0]!.status).toBe('handled');
      expect(await after.replay({ status: 'refused' })).toMatchObject({ handled: 0, refused: 0 });
      expect(await after.replay({ ids: [row!.id] })).toMatchObject({ duplicate: 1, handled: 0 });
      expect(ran).toHaveLength(1);
      await after.close();
    });

    it('replays a handled event as a duplicate, and runs it again with force', async () => {
      const { inbox, receiver } = await receiverOn();
      const sources: string[] = [];
      receiver.onJobCompleted((_event, context) => void sources.push(context.source));
      await receiver.receive(signed(completedPayload({ id: `evt_${randomUUID()}` })));
      await eventually(async () => (await inbox.list({ status: 'handled' })).length === 1);
      const [row] = await inbox.list();
      expect(await receiver.replay({ ids: [row!.id] })).toMatchObject({ duplicate: 1, handled: 0 });
      expect(await receiver.replay({ ids: [row!.id], force: true })).toMatchObject({ handled: 1 });
      expect(sources).toEqual(['webhook', 'replay']);
      await receiver.close();
    });

    it('refuses on replay a stored body changed where the inbox keeps it, and runs nothing', async () => {
      const { inbox, receiver } = await receiverOn();
      const ran: string[] = [];
      receiver.onJobCompleted((event) => void ran.push(event.id));
      await receiver.receive(signed(completedPayload({ id: `evt_${randomUUID()}` })));
      await eventually(async () => (await inbox.list({ status: 'handled' })).length === 1);
      const [row] = await inbox.list();
      await target.tamper(inbox, row!.id);
      const report = await receiver.replay({ ids: [row!.id], force: true });
      expect(report).toMatchObject({ refused: 1, handled: 0 });
      expect(report.deliveries[0]!.reason).toMatch(/^401 invalid_signature/);
      expect(ran).toHaveLength(1);
      await receiver.close();
    });

    it('resolves the tenant on replay from the URL kept, as the first delivery did', async () => {
      const { inbox, dedupe } = await target.make();
      const secrets: Record<string, string> = { acme: SECRET, other: WRONG_SECRET };
      let broken = true;
      const secret = ({ url }: { url?: string | undefined }) => {
        const tenant = new URL(url!).pathname.split('/').pop()!;
        return broken ? { tenant, secret: WRONG_SECRET } : { tenant, secret: secrets[tenant]! };
      };
      const receiver = createReceiver({ secret, inbox, dedupe, logger: quiet });
      const tenants: (string | undefined)[] = [];
      receiver.onJobCompleted((_event, context) => void tenants.push(context.tenant));
      const delivery = {
        ...signed(completedPayload({ id: `evt_${randomUUID()}` })),
        url: 'http://127.0.0.1/hooks/acme',
      };
      expect((await receiver.receive(delivery)).status).toBe(401);
      await eventually(async () => (await inbox.list({ status: 'refused' })).length === 1);
      broken = false;
      expect(await receiver.replay({ status: 'refused' })).toMatchObject({ handled: 1 });
      expect(tenants).toEqual(['acme']);
      await receiver.close();
    });

    it('refuses replay options it does not know, and a pending status', async () => {
      const { receiver } = await receiverOn();
      await expect(receiver.replay({ statuss: 'failed' } as never)).rejects.toThrow(/status/);
      await expect(receiver.replay({ status: 'pending' as never })).rejects.toThrow(/pending/);
      await receiver.close();
    });
  });
}
