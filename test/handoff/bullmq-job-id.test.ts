// BullMQ refuses custom job ids that look like integers or contain ':'; jobIdOf makes any dedupe
// key a valid id, keeps the usual ids as they are, and never gives two keys one id.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { jobIdOf } from 'jobhook/bullmq';

const bullmqAccepts = (id: string) => `${Number.parseInt(id, 10)}` !== id && !id.includes(':');

describe('jobIdOf', () => {
  it('keeps ordinary event ids as they are', () => {
    expect(jobIdOf('evt_01HZ3')).toBe('evt_01HZ3');
    expect(jobIdOf('msg_2a/b')).toBe('msg_2a/b');
  });

  it('escapes what BullMQ refuses', () => {
    expect(jobIdOf('123')).toBe('%3123');
    expect(jobIdOf('-1')).toBe('%2D1');
    expect(jobIdOf('a:b')).toBe('a%3Ab');
    expect(jobIdOf('a%3Ab')).toBe('a%253Ab');
    for (const key of ['123', '-1', '0', 'a:b', 'a:b:c', '1:2'])
      expect(bullmqAccepts(jobIdOf(key))).toBe(true);
  });

  it('gives every key an id BullMQ accepts, and distinct keys distinct ids', () => {
    fc.assert(
      fc.property(fc.string(), fc.string(), (a, b) => {
        expect(bullmqAccepts(jobIdOf(a)) || a === '').toBe(true);
        if (a !== b) expect(jobIdOf(a)).not.toBe(jobIdOf(b));
      }),
      { numRuns: 2000 },
    );
  });
});
