// The in-memory store under the DedupeStore lease contract, on an injected clock.
import { expect, test } from 'vitest';
import { memoryDedupeStore } from 'jobhook';

type MemoryDedupeOptions = NonNullable<Parameters<typeof memoryDedupeStore>[0]>;

function storeAt(options: MemoryDedupeOptions = {}) {
  const clock = { now: 0 };
  const store = memoryDedupeStore({ now: () => clock.now, ...options });
  return { store, clock };
}

test('claims a key once: new, then busy while held, then done once completed', () => {
  const { store } = storeAt();
  expect(store.claim('a', 'o1')).toBe('new');
  expect(store.claim('a', 'o2')).toBe('busy');
  store.complete('a', 'o1');
  expect(store.claim('a', 'o3')).toBe('done');
});

test('a released key can be claimed again (a failed delivery is retried)', () => {
  const { store } = storeAt();
  store.claim('a', 'o1');
  store.release('a', 'o1');
  expect(store.claim('a', 'o2')).toBe('new');
});

test('a claim is a lease: it expires unless renewed, and renewal keeps it', () => {
  const { store, clock } = storeAt({ leaseMs: 1000 });
  expect(store.leaseMs).toBe(1000);
  store.claim('dead', 'crashed');
  store.claim('alive', 'running');
  clock.now = 900;
  expect(store.renew('alive', 'running')).toBe(true);
  clock.now = 1000;
  // The holder of `dead` never renewed: its claim is gone, a retry runs the handlers.
  expect(store.claim('dead', 'retry')).toBe('new');
  expect(store.claim('alive', 'retry')).toBe('busy');
  clock.now = 1899;
  expect(store.claim('alive', 'retry')).toBe('busy');
  clock.now = 1900;
  expect(store.claim('alive', 'retry')).toBe('new');
});

test('only the holder renews or releases; an expired holder cannot free a newer claim', () => {
  const { store, clock } = storeAt({ leaseMs: 1000 });
  store.claim('a', 'first');
  expect(store.renew('a', 'other')).toBe(false);
  store.release('a', 'other');
  expect(store.claim('a', 'other')).toBe('busy');
  clock.now = 1000;
  expect(store.claim('a', 'second')).toBe('new');
  expect(store.renew('a', 'first')).toBe(false);
  store.release('a', 'first');
  expect(store.claim('a', 'third')).toBe('busy');
  store.release('a', 'second');
  expect(store.claim('a', 'third')).toBe('new');
});

test('complete marks done when nobody holds the key, never over another live claim', () => {
  const { store, clock } = storeAt({ leaseMs: 1000 });
  store.claim('a', 'slow');
  clock.now = 1000; // slow's lease lapsed; nobody claimed since
  store.complete('a', 'slow');
  expect(store.claim('a', 'x')).toBe('done');

  store.claim('b', 'slow');
  clock.now = 2000;
  store.claim('b', 'retry'); // a retry holds it now
  store.complete('b', 'slow');
  expect(store.claim('b', 'y')).toBe('busy');
  store.complete('b', 'retry');
  expect(store.claim('b', 'y')).toBe('done');
});

test('forgets handled keys after the retention time', () => {
  const { store, clock } = storeAt({ ttlMs: 1000, leaseMs: 10_000 });
  store.claim('handled', 'o');
  store.complete('handled', 'o');
  store.claim('running', 'o');
  clock.now = 999;
  expect(store.claim('handled', 'p')).toBe('done');
  clock.now = 1500;
  expect(store.claim('handled', 'p')).toBe('new');
  expect(store.claim('running', 'p')).toBe('busy');
});

test('stays bounded by forgetting the oldest handled keys first', () => {
  const { store } = storeAt({ maxEntries: 3 });
  for (const key of ['a', 'b', 'c', 'd']) {
    store.claim(key, key);
    store.complete(key, key);
  }
  expect(store.claim('a', 'o')).toBe('new'); // forgotten, the oldest
  expect(store.claim('d', 'o')).toBe('done');
  expect(store.claim('c', 'o')).toBe('done');
  expect(store.claim('b', 'o')).toBe('done');
});

// A full store hands the room of the key it forgot to the next claim (no allocation per delivery):
// the two keys must stay apart.
test('in a full store, a new key taking a forgotten key’s room is held apart from it', () => {
  const { store } = storeAt({ maxEntries: 2 });
  for (const key of ['a', 'b', 'c']) {
    store.claim(key, key);
    store.complete(key, key);
  }
  expect(store.claim('d', 'd')).toBe('new'); // in the room `a` left
  expect(store.claim('a', 'x')).toBe('new');
  expect(store.renew('d', 'd')).toBe(true);
  expect(store.renew('a', 'd')).toBe(false);
  store.release('a', 'x');
  store.complete('d', 'd');
  expect([store.claim('d', 'y'), store.claim('c', 'y'), store.claim('b', 'y')]).toEqual([
    'done',
    'done',
    'new',
  ]);
  expect(store.claim('a', 'y')).toBe('new');
});

test('claims in flight never push out handled keys: past the bound a new claim is busy', () => {
  const { store, clock } = storeAt({ maxEntries: 2, leaseMs: 1000 });
  store.claim('h1', 'o');
  store.complete('h1', 'o');
  store.claim('h2', 'o');
  store.complete('h2', 'o');
  expect(store.claim('x', 'o')).toBe('new');
  expect(store.claim('y', 'o')).toBe('new');
  expect(store.claim('z', 'o')).toBe('busy'); // refused, not stored
  expect([store.claim('h1', 'p'), store.claim('h2', 'p')]).toEqual(['done', 'done']);
  expect(store.size).toBe(4);
  // Once the claims lapse there is room again.
  clock.now = 1000;
  expect(store.claim('z', 'o')).toBe('new');
  expect(store.claim('h1', 'p')).toBe('done');
});

test('a clock that goes back does not revive an expired entry', () => {
  const { store, clock } = storeAt({ leaseMs: 1000 });
  clock.now = 5000;
  store.claim('a', 'o');
  clock.now = 7000;
  expect(store.claim('b', 'o')).toBe('new'); // trims a
  clock.now = 5500;
  expect(store.claim('a', 'p')).toBe('new');
});

// Handled keys are pruned from the oldest; after the clock went back, a newer key can expire first.
test('a handled key that expires before an older one (the clock went back) is forgotten on time', () => {
  const { store, clock } = storeAt({ ttlMs: 1000 });
  clock.now = 5000;
  store.claim('a', 'o');
  store.complete('a', 'o'); // until 6000
  clock.now = 1000;
  store.claim('b', 'o');
  store.complete('b', 'o'); // until 2000, behind `a`
  clock.now = 2000;
  expect(store.claim('b', 'p')).toBe('new');
  expect(store.claim('a', 'p')).toBe('done');
  expect(store.size).toBe(2); // `a` handled, `b` claimed
  store.complete('b', 'p');
  expect(store.claim('b', 'q')).toBe('done');
  expect(store.size).toBe(2);
});
