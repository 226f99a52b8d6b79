// The Node form of `#runtime` (contract.ts): node:crypto and Buffer, all synchronous.
import { isUtf8 } from 'node:buffer';
import { createHmac, createSecretKey, randomBytes, timingSafeEqual, type KeyObject } from 'node:crypto';
import type {
  AfterHmac,
  DecodeBase64Digest,
  DecodeDigest,
  DecodeUtf8,
  HmacKeys,
  ImportHmacKeys,
  RandomHex,
  SignHmac,
  SignedParts,
  VerifyHmac,
} from './contract.js';
import { requireSupportedNode } from './node-version.js';

requireSupportedNode();

export const importHmacKeys: ImportHmacKeys = (keys) =>
  keys.map((key) => createSecretKey(key)) as unknown as HmacKeys;

export const verifyHmac: VerifyHmac = (keys, parts, candidates) => {
  for (const key of keys as unknown as KeyObject[]) {
    const expected = digest(key, parts);
    for (const candidate of candidates) {
      // A digest's length is no secret: only equal lengths are compared, in constant time.
      if (candidate.byteLength === expected.byteLength && timingSafeEqual(candidate, expected)) return true;
    }
  }
  return false;
};

export const signHmac: SignHmac = (key, parts) => digest(createSecretKey(key), parts);

export const afterHmac: AfterHmac = <T, R, A>(
  result: T | Promise<T>,
  next: (value: T, arg: A) => R,
  arg?: A,
) => next(result as T, arg as A);

/** HMAC-SHA256 over the concatenation of `parts`, without copying them into one buffer. */
function digest(key: KeyObject, parts: SignedParts): Buffer {
  const hmac = createHmac('sha256', key);
  for (const part of parts) hmac.update(part);
  return hmac.digest();
}

export const decodeUtf8: DecodeUtf8 = (bytes) => {
  const buffer = Buffer.isBuffer(bytes)
    ? bytes
    : Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const text = buffer.toString('utf8');
  // Invalid sequences decode to U+FFFD: only a text holding one needs the second pass of isUtf8.
  if (text.indexOf('\uFFFD') !== -1 && !isUtf8(bytes)) return undefined;
  return text;
};

export const randomHex: RandomHex = (bytes) => randomBytes(bytes).toString('hex');

export const decodeDigest: DecodeDigest = (text, encoding) => Buffer.from(text, encoding);

export const decodeBase64Digest: DecodeBase64Digest = (text) => {
  if (text.length !== 44 || text.charCodeAt(43) !== 0x3d) return undefined;
  // Buffer skips what is not base64: 32 bytes come only from 43 characters (`-` and `_` refused here).
  const bytes = Buffer.from(text, 'base64');
  return bytes.byteLength === 32 && !text.includes('-') && !text.includes('_') ? bytes : undefined;
};
