// The memory store against a plain model of its documented behaviour (a Map of claims, an array of
// handled keys in the order they were handled), over generated runs of claims, renewals,
// completions, releases and a clock that moves forward. Small bounds and many keys, so that the
// store's own structures go through what a long-running receiver meets: handled keys forgotten
// by count and by age, the ring wrapping and growing, the hash table's probes colliding and the
// table rebuilt many times over.
import fc from 'fast-check';
import { memoryDedupeStore } from 'jobhook';
import type { ClaimResult } from 'jobhook/extend';
import { expect, test } from 'vitest';

interface Limits {
  maxEntries: number;
  ttlMs: number;
  leaseMs: number;
}

/** What the docs promise, written as plainly as possible. */
function model({ maxEntries, ttlMs, leaseMs }: Limits) {
  const claims = new Map<string, { owner: string; expiresAt: number }>();
  let handled: { key: string; expiresAt: number }[] = [];
  const isHandled = (key: string, at: number) => handled.some((h) => h.key === key && h.expiresAt > at);
  const dropExpiredHandled = (at: number) => {
    handled = handled.filter((h) => h.expiresAt > at);
  };
  return {
    claim(key: string, owner: string, at: number): ClaimResult {
      for (const [k, c] of claims) if (c.expiresAt <= at) claims.delete(k);
      dropExpiredHandled(at);
      if (claims.has(key)) return 'busy';
      if (isHandled(key, at)) return 'done';
      if (claims.size >= maxEntries) return 'busy';
      claims.set(key, { owner, expiresAt: at + leaseMs });
      return 'new';
    },
    renew(key: string, owner: string, at: number): boolean {
      const c = claims.get(key);
      if (!c || c.expiresAt <= at || c.owner !== owner) return false;
      c.expiresAt = at + leaseMs;
      return true;
    },
    complete(key: string, owner: string, at: number): void {
      const c = claims.get(key);
      const live = c && c.expiresAt > at ? c : undefined;
      if (live) {
        if (live.owner !== owner) return;
        claims.delete(key);
      } else {
        if (c) claims.delete(key);
        if (isHandled(key, at)) return;
      }
      dropExpiredHandled(at);
      handled.push({ key, expiresAt: at + ttlMs });
      // The oldest handled keys go first once there are more than maxEntries.
      if (handled.length > maxEntries) handled = handled.slice(handled.length - maxEntries);
    },
    release(key: string, owner: string): void {
      if (claims.get(key)?.owner === owner) claims.delete(key);
    },
  };
}

const step = fc.record({
  op: fc.constantFrom('claim', 'renew', 'complete', 'release', 'claim+complete'),
  key: fc.integer({ min: 0, max: 60 }),
  owner: fc.integer({ min: 0, max: 3 }),
  advanceMs: fc.oneof(fc.constant(0), fc.integer({ min: 0, max: 40 }), fc.integer({ min: 0, max: 400 })),
});

test('answers as the model does, run after run', () => {
  fc.assert(
    fc.property(
      fc.record({
        maxEntries: fc.integer({ min: 1, max: 40 }),
        ttlMs: fc.integer({ min: 1, max: 2_000 }),
        leaseMs: fc.integer({ min: 1, max: 300 }),
      }),
      fc.array(step, { minLength: 1, maxLength: 400 }),
      (limits, steps) => {
        let now = 1_000;
        const store = memoryDedupeStore({ ...limits, now: () => now });
        const expected = model(limits);
        for (const { op, key: k, owner: o, advanceMs } of steps) {
          now += advanceMs;
          const key = `evt_${k}`;
          const owner = `owner-${o}`;
          if (op === 'claim') expect(store.claim(key, owner)).toBe(expected.claim(key, owner, now));
          if (op === 'renew') expect(store.renew(key, owner)).toBe(expected.renew(key, owner, now));
          if (op === 'release') {
            store.release(key, owner);
            expected.release(key, owner);
          }
          if (op === 'complete' || op === 'claim+complete') {
            if (op === 'claim+complete') {
              expect(store.claim(key, owner)).toBe(expected.claim(key, owner, now));
            }
            store.complete(key, owner);
            expected.complete(key, owner, now);
          }
        }
        // Every key answers as the model's: none forgotten early, none kept past its time.
        for (let k = 0; k <= 60; k++) {
          expect(store.claim(`evt_${k}`, 'last')).toBe(expected.claim(`evt_${k}`, 'last', now));
        }
      },
    ),
    { numRuns: 300 },
  );
});

test('a long run of fresh keys: exactly the last maxEntries are remembered', () => {
  let now = 0;
  const store = memoryDedupeStore({ maxEntries: 1_000, now: () => now });
  for (let i = 0; i < 25_000; i++) {
    now++;
    expect(store.claim(`evt_${i}`, 'o')).toBe('new');
    store.complete(`evt_${i}`, 'o');
  }
  expect(store.size).toBe(1_000);
  expect(store.claim('evt_23999', 'p')).toBe('new');
  for (let i = 24_000; i < 25_000; i++) expect(store.claim(`evt_${i}`, 'p')).toBe('done');
});
