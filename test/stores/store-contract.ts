// The DedupeStore lease contract (src/dedupe/dedupe-store.ts) as one suite, run against every
// store: `storeContract(target)` inside a test file. Times are short real leases (a few hundred
// ms), not fake clocks, since the Redis and Postgres stores keep time on the server.
import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import type { DedupeStore } from 'jobhook/extend';
import { describe, expect, it } from 'vitest';
import { rounds, sinceNow } from '../support/stalls.js';

export interface ContractTarget {
  /** A store with these times, empty of the keys the suite uses (they are random). */
  make(times: { leaseMs: number; ttlMs: number }): DedupeStore | Promise<DedupeStore>;
  /** Lets `ms` of the store's time pass. Default: real time (a store with a clock option can fake it). */
  pass?(ms: number): Promise<void>;
}

const LEASE = 300;
/** Past a lease or retention of LEASE, with room for a busy machine's timers. */
const PAST = LEASE + 150;
/** Well within a lease of LEASE. */
const WITHIN = 100;

export function storeContract(target: ContractTarget): void {
  const pass = (ms: number) => (target.pass ? target.pass(ms) : sleep(ms));
  /** Taken just before a store call that starts a lease or a retention; a fake clock (`pass`) never stalls. */
  const mark = () => sinceNow(target.pass ? Infinity : LEASE);
  const key = () => `evt_${randomUUID()}`;
  const owner = () => randomUUID();
  const store = () => target.make({ leaseMs: LEASE, ttlMs: LEASE });
  const long = () => target.make({ leaseMs: 60_000, ttlMs: 60_000 });

  describe('the DedupeStore contract', () => {
    it('tells its lease', async () => {
      expect((await store()).leaseMs).toBe(LEASE);
    });

    it('gives `new` to exactly one of 50 concurrent claims of one key, `busy` to the others', async () => {
      const s = await long();
      const k = key();
      const results = await Promise.all(Array.from({ length: 50 }, async () => s.claim(k, owner())));
      expect(results.filter((r) => r === 'new')).toHaveLength(1);
      expect(results.filter((r) => r === 'busy')).toHaveLength(49);
    });

    it('keeps keys apart', async () => {
      const s = await long();
      expect(await s.claim(key(), owner())).toBe('new');
      expect(await s.claim(key(), owner())).toBe('new');
    });

    it('answers `busy` while a claim lives, to other owners and to the holder alike', () =>
      rounds(async () => {
        const s = await store();
        const k = key();
        const a = owner();
        const claimed = mark();
        expect(await s.claim(k, a)).toBe('new');
        await pass(WITHIN);
        const [other, same] = [await s.claim(k, owner()), await s.claim(k, a)];
        claimed.within();
        expect(other).toBe('busy');
        expect(same).toBe('busy');
      }));

    it('lets a claim expire with its lease: a dead holder never wedges a key', async () => {
      const s = await store();
      const k = key();
      expect(await s.claim(k, owner())).toBe('new');
      await pass(PAST);
      expect(await s.claim(k, owner())).toBe('new');
    });

    it('extends the lease on renew, for the holder only', () =>
      rounds(async () => {
        const s = await store();
        const k = key();
        const a = owner();
        let held = mark();
        expect(await s.claim(k, a)).toBe('new');
        expect(await s.renew(k, owner())).toBe(false);
        // Renewed twice, the claim outlives its first lease by far.
        for (let renewal = 0; renewal < 2; renewal++) {
          await pass(LEASE - WITHIN);
          const renewing = mark();
          const renewed = await s.renew(k, a);
          held.within();
          expect(renewed).toBe(true);
          held = renewing;
        }
        await pass(LEASE - WITHIN);
        const claimed = await s.claim(k, owner());
        held.within();
        expect(claimed).toBe('busy');
      }));

    it('refuses to renew an expired claim, and one another owner took over', () =>
      rounds(async () => {
        const s = await store();
        const k = key();
        const a = owner();
        expect(await s.claim(k, a)).toBe('new');
        await pass(PAST);
        expect(await s.renew(k, a)).toBe(false);
        const b = owner();
        const held = mark();
        expect(await s.claim(k, b)).toBe('new');
        expect(await s.renew(k, a)).toBe(false);
        const renewed = await s.renew(k, b);
        held.within();
        expect(renewed).toBe(true);
      }));

    it('frees a key on release by its holder only', async () => {
      const s = await long();
      const k = key();
      const a = owner();
      expect(await s.claim(k, a)).toBe('new');
      await s.release(k, owner());
      expect(await s.claim(k, owner())).toBe('busy');
      await s.release(k, a);
      expect(await s.claim(k, owner())).toBe('new');
    });

    it('keeps a stale holder from releasing the claim of the owner that took over', () =>
      rounds(async () => {
        const s = await store();
        const k = key();
        const a = owner();
        expect(await s.claim(k, a)).toBe('new');
        await pass(PAST);
        const b = owner();
        const held = mark();
        expect(await s.claim(k, b)).toBe('new');
        await s.release(k, a);
        const [claimed, renewed] = [await s.claim(k, owner()), await s.renew(k, b)];
        held.within();
        expect(claimed).toBe('busy');
        expect(renewed).toBe(true);
      }));

    it('answers `done` once the holder completes, to everyone, for the retention time', async () => {
      const s = await long();
      const k = key();
      const a = owner();
      expect(await s.claim(k, a)).toBe('new');
      await s.complete(k, a);
      expect(await s.claim(k, owner())).toBe('done');
      expect(await s.claim(k, a)).toBe('done');
      // A done key is no longer anybody's claim: neither renew nor release touch it.
      expect(await s.renew(k, a)).toBe(false);
      await s.release(k, a);
      expect(await s.claim(k, owner())).toBe('done');
    });

    it('forgets a done key after the retention time', () =>
      rounds(async () => {
        const s = await store();
        const k = key();
        const a = owner();
        expect(await s.claim(k, a)).toBe('new');
        const kept = mark();
        await s.complete(k, a);
        await pass(WITHIN);
        const claimed = await s.claim(k, owner());
        kept.within();
        expect(claimed).toBe('done');
        await pass(PAST);
        expect(await s.claim(k, owner())).toBe('new');
      }));

    it('marks done on complete when the lease expired and nobody claimed since (the handlers did succeed)', async () => {
      const s = await store();
      const k = key();
      const a = owner();
      expect(await s.claim(k, a)).toBe('new');
      await pass(PAST);
      await s.complete(k, a);
      expect(await s.claim(k, owner())).toBe('done');
    });

    it('never lets a stale holder complete over another owner’s live claim', () =>
      rounds(async () => {
        const s = await store();
        const k = key();
        const a = owner();
        expect(await s.claim(k, a)).toBe('new');
        await pass(PAST);
        const b = owner();
        const held = mark();
        expect(await s.claim(k, b)).toBe('new');
        await s.complete(k, a);
        const [claimed, renewed] = [await s.claim(k, owner()), await s.renew(k, b)];
        held.within();
        expect(claimed).toBe('busy');
        expect(renewed).toBe(true);
        await s.complete(k, b);
        expect(await s.claim(k, owner())).toBe('done');
      }));

    it('treats owner tokens as opaque: an owner named "done" is a claim like any other', async () => {
      const s = await long();
      const k = key();
      expect(await s.claim(k, 'done')).toBe('new');
      expect(await s.claim(k, owner())).toBe('busy');
      await s.release(k, 'done');
      expect(await s.claim(k, owner())).toBe('new');
    });
  });
}
