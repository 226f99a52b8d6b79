// isBase64Digest replaced a regular expression on every delivery's signature: it must accept
// exactly what that expression accepted.
import fc from 'fast-check';
import { expect, test } from 'vitest';
import { isBase64Digest } from '../../src/common/bytes.js';

const PATTERN = /^[A-Za-z0-9+/]{43}=$/;
const CHARS = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/=-_ .é\u0000\u{1F600}'.split(
  '',
);

test('accepts exactly 43 base64 characters and one "=", as the pattern did', () => {
  const nearDigest = fc
    .array(fc.constantFrom(...CHARS), { minLength: 42, maxLength: 46 })
    .map((chars) => chars.join(''));
  const alphabet = CHARS.slice(0, 64);
  const digest = fc
    .array(fc.constantFrom(...alphabet), { minLength: 43, maxLength: 43 })
    .map((chars) => `${chars.join('')}=`);
  const oneCharChanged = fc
    .tuple(digest, fc.nat(43), fc.constantFrom(...CHARS))
    .map(([text, at, char]) => text.slice(0, at) + char + text.slice(at + 1));
  fc.assert(
    fc.property(fc.oneof(digest, oneCharChanged, nearDigest, fc.string()), (text) => {
      expect(isBase64Digest(text)).toBe(PATTERN.test(text));
      expect(isBase64Digest(`v1,${text}`, 3)).toBe(PATTERN.test(text));
    }),
    { numRuns: 5000 },
  );
  expect(isBase64Digest(`${'A'.repeat(43)}=`)).toBe(true);
});
