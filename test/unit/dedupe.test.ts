import { expect, test } from 'vitest';
import { memoryDedupeStore } from 'jobhook';

test('claims an id once: new, then busy while in flight, then done once completed', () => {
  const store = memoryDedupeStore();
  expect(store.claim('a')).toBe('new');
  expect(store.claim('a')).toBe('busy');
  store.complete('a');
  expect(store.claim('a')).toBe('done');
});

test('a released id can be claimed again (a failed delivery is retried)', () => {
  const store = memoryDedupeStore();
  store.claim('a');
  store.release('a');
  expect(store.claim('a')).toBe('new');
});

test('forgets handled ids after their age, but never one in flight', () => {
  let now = 0;
  const store = memoryDedupeStore({ ttlMs: 1000, now: () => now });
  store.claim('handled');
  store.complete('handled');
  store.claim('running');
  now = 1500;
  expect(store.claim('handled')).toBe('new');
  expect(store.claim('running')).toBe('busy');
});

test('stays bounded in size by forgetting the oldest handled ids first', () => {
  const store = memoryDedupeStore({ maxEntries: 3 });
  for (const id of ['a', 'b', 'c', 'd']) {
    store.claim(id);
    store.complete(id);
  }
  expect(store.claim('a')).toBe('new'); // evicted, the oldest
  expect(store.claim('d')).toBe('done');
  expect(store.claim('c')).toBe('done');
  expect(store.size).toBeLessThanOrEqual(3);
});

test('does not evict ids in flight to make room', () => {
  const store = memoryDedupeStore({ maxEntries: 2 });
  store.claim('x');
  store.claim('y');
  store.claim('z');
  expect([store.claim('x'), store.claim('y'), store.claim('z')]).toEqual(['busy', 'busy', 'busy']);
  expect(store.size).toBe(3);
});
