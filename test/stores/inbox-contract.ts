// The Inbox contract (src/inbox/inbox.ts) as one suite, run against every inbox:
// `inboxContract(target)` inside a test file. Each case makes an inbox of its own (an empty table),
// so counts are exact; times are short real leases and retentions, since the stores keep time.
import { randomBytes, randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Inbox, InboxDelivery, InboxOptions } from 'jobhook/extend';
import { describe, expect, it } from 'vitest';
import { rounds, sinceNow } from '../support/stalls.js';

export interface InboxTarget {
  /** An empty inbox with these options. */
  make(options: InboxOptions): Inbox | Promise<Inbox>;
}

/** Past a lease or retention of SHORT, with room for a busy machine's timers. */
const SHORT = 300;
const PAST = SHORT + 200;

function delivery(overrides: Partial<InboxDelivery> = {}): InboxDelivery {
  return {
    body: new TextEncoder().encode(JSON.stringify({ id: `evt_${randomUUID()}` })),
    headers: {
      'webhook-id': `msg_${randomUUID()}`,
      'webhook-signature': 'v1,abc',
      'content-type': 'application/json',
    },
    url: 'https://app.example/webhooks/tenant-a',
    receivedAt: Date.now(),
    tenant: undefined,
    type: 'job.completed',
    deliveryId: undefined,
    ...overrides,
  };
}

export function inboxContract(target: InboxTarget): void {
  const long = () => target.make({ leaseMs: 60_000 });

  describe('the Inbox contract', () => {
    it('keeps the bytes, headers, URL, arrival time and tenant exactly as stored', async () => {
      const inbox = await long();
      // Every byte value, a zero and a lone UTF-8 continuation byte included: the body is bytes, not text.
      const body = new Uint8Array([...Array.from({ length: 256 }, (_, i) => i), 0, 0x80]);
      const given = delivery({
        body,
        tenant: 'tenant-a',
        deliveryId: 'msg_1',
        receivedAt: 1_764_000_000_123,
        headers: { 'webhook-id': 'msg_1', 'webhook-signature': 'v1,sig v1,other', 'x-ünïcode': 'ça' },
      });
      const id = await inbox.store(given);
      const [stored] = await inbox.list({ ids: [id] });
      expect(stored).toMatchObject({
        id,
        status: 'pending',
        attempts: 0,
        headers: given.headers,
        url: given.url,
        receivedAt: given.receivedAt,
        tenant: 'tenant-a',
        type: 'job.completed',
        deliveryId: 'msg_1',
      });
      expect(Buffer.from(stored!.body).equals(Buffer.from(body))).toBe(true);
    });

    it('gives each of 300 deliveries stored at once its own id, under which its own bytes are kept', async () => {
      // Stored together, they are written together (one statement or transaction per batch): each
      // id must still be the one of its own delivery's row.
      const inbox = await long();
      const given = Array.from({ length: 300 }, (_, at) =>
        delivery({ body: randomBytes(64 + at), deliveryId: `msg_${at}` }),
      );
      const ids = await Promise.all(given.map((each) => inbox.store(each)));
      expect(new Set(ids).size).toBe(300);
      const stored = new Map((await inbox.list({ limit: 1000 })).map((row) => [row.id, row]));
      given.forEach((each, at) => {
        const row = stored.get(ids[at]!);
        expect(row?.deliveryId).toBe(`msg_${at}`);
        expect(Buffer.from(row!.body).equals(Buffer.from(each.body))).toBe(true);
      });
    });

    it('leases each pending delivery to one of 10 concurrent owners, oldest first', async () => {
      const inbox = await long();
      const ids: string[] = [];
      for (let i = 0; i < 30; i++) ids.push(await inbox.store(delivery()));
      const leased = await Promise.all(Array.from({ length: 10 }, () => inbox.lease(randomUUID(), 5)));
      const all = leased.flat().map((row) => row.id);
      expect(new Set(all).size).toBe(all.length);
      expect(all.sort()).toEqual(ids.slice(0, all.length).sort());
      expect(all.length).toBe(30);
      for (const rows of leased) {
        const order = rows.map((row) => Number(row.id));
        expect(order).toEqual([...order].sort((a, b) => a - b));
      }
    });

    it('gives a leased delivery to no one else until its lease lapses', () =>
      rounds(async () => {
        const inbox = await target.make({ leaseMs: SHORT });
        const id = await inbox.store(delivery());
        const leased = sinceNow(SHORT);
        expect((await inbox.lease('a', 10)).map((row) => row.id)).toEqual([id]);
        const other = await inbox.lease('b', 10);
        leased.within();
        expect(other).toEqual([]);
        await sleep(PAST);
        const taken = sinceNow(SHORT);
        expect((await inbox.lease('b', 10)).map((row) => row.id)).toEqual([id]);
        // The first owner lost it: its settlement is refused, the new owner's is taken.
        expect(await inbox.settle(id, { status: 'handled', attempts: 1 }, 'a')).toBe(false);
        const settled = await inbox.settle(id, { status: 'handled', attempts: 1 }, 'b');
        taken.within();
        expect(settled).toBe(true);
        expect((await inbox.list({ ids: [id] }))[0]).toMatchObject({ status: 'handled', attempts: 1 });
      }));

    it('settles once: a handled delivery is not leased again, and its owner cannot settle it twice', async () => {
      const inbox = await long();
      const id = await inbox.store(delivery());
      await inbox.lease('a', 1);
      expect(await inbox.settle(id, { status: 'handled', attempts: 1 }, 'a')).toBe(true);
      expect(await inbox.settle(id, { status: 'failed', attempts: 2, reason: 'late' }, 'a')).toBe(false);
      expect(await inbox.lease('b', 10)).toEqual([]);
    });

    it('holds a retry back until it is due, with its attempts and reason', () =>
      rounds(async () => {
        const inbox = await long();
        const id = await inbox.store(delivery());
        await inbox.lease('a', 1);
        const held = sinceNow(SHORT);
        const dueAt = Date.now() + SHORT;
        await inbox.settle(id, { status: 'pending', attempts: 1, dueAt, reason: '500 handler_failed' }, 'a');
        const early = await inbox.lease('b', 10);
        held.within();
        expect(early).toEqual([]);
        await sleep(PAST);
        const [again] = await inbox.lease('b', 10);
        expect(again).toMatchObject({ id, attempts: 1, reason: '500 handler_failed', dueAt });
      }));

    it('settles without an owner (a replay), whatever the status', async () => {
      const inbox = await long();
      await inbox.quarantine(delivery(), '401 no_match');
      const [refused] = await inbox.list({ status: 'refused' });
      expect(await inbox.settle(refused!.id, { status: 'handled', attempts: 1 })).toBe(true);
      expect((await inbox.list({ ids: [refused!.id] }))[0]!.status).toBe('handled');
    });

    it('marks settled deliveries for replay: pending and due now, the mark leased with them', async () => {
      const inbox = await long();
      await inbox.quarantine(delivery(), 'forged');
      const pending = await inbox.store(delivery());
      const [refused] = await inbox.list({ status: 'refused' });
      expect(await inbox.requeue([refused!.id, pending], 'force')).toBe(1);
      const leased = await inbox.lease('a', 10);
      expect(leased.map((row) => [row.id, row.replay])).toEqual([
        [refused!.id, 'force'],
        [pending, undefined],
      ]);
      await inbox.settle(refused!.id, { status: 'handled', attempts: 1 }, 'a');
      expect((await inbox.list({ ids: [refused!.id] }))[0]).toMatchObject({
        status: 'handled',
        replay: undefined,
      });
      await expect(inbox.requeue(['x'], 'replay')).rejects.toThrow(/ids/);
    });

    it('keeps refused deliveries with their reason, never leased', async () => {
      const inbox = await long();
      await inbox.quarantine(delivery({ type: undefined }), '401 no_match: the signature matches no secret');
      const [kept] = await inbox.list({ status: 'refused' });
      expect(kept).toMatchObject({
        status: 'refused',
        reason: '401 no_match: the signature matches no secret',
      });
      expect(kept!.type).toBeUndefined();
      expect(await inbox.lease('a', 10)).toEqual([]);
    });

    it('bounds the quarantine by count, the oldest out first', async () => {
      const inbox = await target.make({ quarantine: { maxCount: 10 } });
      for (let i = 0; i < 150; i++) await inbox.quarantine(delivery({ deliveryId: `d${i}` }), 'forged');
      // Trimmed every few writes: within the bound plus one batch, then exact after a prune.
      expect((await inbox.list({ status: 'refused' })).length).toBeLessThanOrEqual(10 + 64);
      await inbox.prune();
      const kept = await inbox.list({ status: 'refused' });
      expect(kept.map((row) => row.deliveryId)).toEqual(Array.from({ length: 10 }, (_, i) => `d${140 + i}`));
    });

    it('bounds the quarantine by bytes, the oldest out first', async () => {
      const inbox = await target.make({ quarantine: { maxBytes: 64 * 1024 } });
      for (let i = 0; i < 100; i++) {
        await inbox.quarantine(delivery({ body: randomBytes(4096), deliveryId: `d${i}` }), 'forged');
      }
      await inbox.prune();
      const kept = await inbox.list({ status: 'refused' });
      const bytes = kept.reduce((sum, row) => sum + row.body.byteLength, 0);
      expect(bytes).toBeLessThanOrEqual(64 * 1024);
      expect(kept.length).toBeGreaterThanOrEqual(10);
      expect(kept.at(-1)!.deliveryId).toBe('d99');
    });

    it('forgets settled deliveries past retainMs, never a pending one', () =>
      rounds(async () => {
        const inbox = await target.make({ retainMs: SHORT, leaseMs: 60_000 });
        const kept = sinceNow(SHORT);
        const pending = await inbox.store(delivery());
        const handled = await inbox.store(delivery());
        await inbox.lease('a', 10);
        await inbox.settle(handled, { status: 'handled', attempts: 1 }, 'a');
        await inbox.quarantine(delivery(), 'forged');
        await inbox.prune();
        const all = await inbox.list();
        kept.within();
        expect(all).toHaveLength(3);
        await sleep(PAST);
        await inbox.prune();
        expect((await inbox.list()).map((row) => row.id)).toEqual([pending]);
      }));

    it('caps the bytes of settled deliveries, the oldest out first', async () => {
      const inbox = await target.make({ maxBytes: 40 * 1024, leaseMs: 60_000 });
      const ids: string[] = [];
      for (let i = 0; i < 20; i++) ids.push(await inbox.store(delivery({ body: randomBytes(4096) })));
      for (const row of await inbox.lease('a', 20)) {
        await inbox.settle(row.id, { status: 'handled', attempts: 1 }, 'a');
      }
      const pending = await inbox.store(delivery({ body: randomBytes(4096) }));
      await inbox.prune();
      const kept = (await inbox.list()).map((row) => row.id);
      expect(kept.length).toBeLessThan(11);
      expect(kept).toContain(pending);
      expect(kept).toContain(ids.at(-1));
      expect(kept).not.toContain(ids[0]);
    });

    it('lists by ids, status, tenant, type and arrival time, oldest first, within a limit', async () => {
      const inbox = await long();
      const base = 1_764_000_000_000;
      const a = await inbox.store(delivery({ tenant: 'a', receivedAt: base }));
      const b = await inbox.store(delivery({ tenant: 'b', type: 'job.failed', receivedAt: base + 1000 }));
      await inbox.quarantine(delivery({ tenant: 'a', receivedAt: base + 2000 }), 'forged');
      const ids = async (filter: Parameters<Inbox['list']>[0]) =>
        (await inbox.list(filter)).map((row) => row.id);
      expect(await ids({ ids: [b, a] })).toEqual([a, b]);
      expect(await ids({ ids: [] })).toEqual([]);
      expect(await ids({ status: 'pending' })).toEqual([a, b]);
      expect(await ids({ tenant: 'b' })).toEqual([b]);
      expect(await ids({ type: 'job.failed' })).toEqual([b]);
      expect(await ids({ since: base + 500, status: 'pending' })).toEqual([b]);
      expect(await ids({ until: new Date(base + 500) })).toEqual([a]);
      expect(await ids({ limit: 1 })).toEqual([a]);
      expect((await inbox.list({ tenant: 'a', status: 'refused' }))[0]!.reason).toBe('forged');
    });

    it('refuses a filter it cannot apply, rather than listing everything', async () => {
      const inbox = await long();
      await expect(inbox.list({ ids: ['1; DROP TABLE x'] })).rejects.toThrow(/ids/);
      await expect(inbox.list({ status: 'lost' as 'failed' })).rejects.toThrow(/status/);
    });
  });
}
