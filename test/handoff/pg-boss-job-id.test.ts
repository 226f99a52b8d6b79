// pg-boss stores one job per id: jobIdOf makes a dedupe key a UUID (name-based, version 5), the
// same for every receiver, and different keys different ids.
import { createHash } from 'node:crypto';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { jobIdOf } from 'jobhook/pg-boss';

const UUID_V5 = /^[0-9a-f]{8}-[0-9a-f]{4}-5[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

describe('jobIdOf (pg-boss)', () => {
  it('is a version 5 UUID of the key, stable across calls', () => {
    expect(jobIdOf('evt_01HZ3')).toMatch(UUID_V5);
    expect(jobIdOf('evt_01HZ3')).toBe(jobIdOf('evt_01HZ3'));
    // SHA-1 of the namespace and the key, as RFC 9562 computes a version 5 UUID.
    const namespace = Buffer.from('6f1c2b4e8a0d4c57b9e3a1d2c4f6e8b0', 'hex');
    const hex = createHash('sha1').update(namespace).update('evt_01HZ3').digest('hex');
    expect(jobIdOf('evt_01HZ3').replaceAll('-', '').slice(16)).toBe(
      ((Number.parseInt(hex.slice(16, 18), 16) & 0x3f) | 0x80).toString(16) + hex.slice(18, 32),
    );
  });

  it('gives every key a UUID, and distinct keys distinct ids', () => {
    fc.assert(
      fc.property(fc.string(), fc.string(), (a, b) => {
        expect(jobIdOf(a)).toMatch(UUID_V5);
        if (a !== b) expect(jobIdOf(a)).not.toBe(jobIdOf(b));
      }),
      { numRuns: 2000 },
    );
  });
});
