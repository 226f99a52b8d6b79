import { describe, expect, it } from 'vitest';
import { ExpiryList, type ExpiryLinks } from '../../src/common/structures.js';

// The one expiry queue of the memory dedupe store, the recent job results and the body deadlines.
interface Item extends ExpiryLinks<Item> {
  name: string;
}

const item = (name: string): Item => ({
  name,
  expiresAt: 0,
  list: undefined,
  older: undefined,
  newer: undefined,
});

function names(list: ExpiryList<Item>): string[] {
  const seen: string[] = [];
  for (let entry = list.oldest; entry; entry = entry.newer) seen.push(entry.name);
  return seen;
}

function drain(list: ExpiryList<Item>, at: number, max?: number): string[] {
  const taken: string[] = [];
  for (let entry = list.shift(at, max); entry; entry = list.shift(at, max)) taken.push(entry.name);
  return taken;
}

describe('ExpiryList', () => {
  it('gives back what expired, oldest first, and nothing that has not', () => {
    const list = new ExpiryList<Item>();
    list.push(item('a'), 100);
    list.push(item('b'), 110);
    list.push(item('c'), 120);
    expect(drain(list, 99)).toEqual([]);
    expect(drain(list, 110)).toEqual(['a', 'b']);
    expect(names(list)).toEqual(['c']);
    expect(list.size).toBe(1);
  });

  it('drops the oldest while it holds more than the bound, expired or not', () => {
    const list = new ExpiryList<Item>();
    for (const name of ['a', 'b', 'c', 'd']) list.push(item(name), 1000);
    expect(drain(list, 0, 2)).toEqual(['a', 'b']);
    expect(names(list)).toEqual(['c', 'd']);
  });

  it('takes an entry out of the middle, the head or the tail, and it can go back on at the end', () => {
    const list = new ExpiryList<Item>();
    const [a, b, c] = [item('a'), item('b'), item('c')];
    list.push(a, 1);
    list.push(b, 2);
    list.push(c, 3);
    list.remove(b);
    expect(b.list).toBeUndefined();
    expect(names(list)).toEqual(['a', 'c']);
    list.remove(a);
    list.remove(c);
    expect(names(list)).toEqual([]);
    expect([list.oldest, list.newest, list.size]).toEqual([undefined, undefined, 0]);
    list.push(b, 5);
    list.push(a, 6);
    expect(names(list)).toEqual(['b', 'a']);
    expect(a.list).toBe(list);
    expect(a.expiresAt).toBe(6);
  });

  it('after a clock that stepped back, drops an entry late (at the head), never early', () => {
    const list = new ExpiryList<Item>();
    list.push(item('a'), 100);
    list.push(item('b'), 50);
    expect(drain(list, 60)).toEqual([]);
    expect(drain(list, 100)).toEqual(['a', 'b']);
  });
});
