// The Node form of `#runtime` (see contract.ts): node:crypto and Buffer, all synchronous, so the
// receiver's hot path awaits nothing. Only Node loads this file (the `node` condition).
import { isUtf8 } from 'node:buffer';
import { createHmac, createSecretKey, randomBytes, timingSafeEqual, type KeyObject } from 'node:crypto';
import type {
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

// Every part of jobhook that receives or signs loads this file on Node: an older Node fails here,
// at startup, rather than on each delivery.
requireSupportedNode();

export const importHmacKeys: ImportHmacKeys = (keys) =>
  keys.map((key) => createSecretKey(key)) as unknown as HmacKeys;

export const verifyHmac: VerifyHmac = (keys, parts, candidates) => {
  for (const key of keys as unknown as KeyObject[]) {
    const expected = digest(key, parts);
    for (const candidate of candidates) {
      // Length is not secret (it is the digest's): only equal lengths are compared, in constant time.
      if (candidate.byteLength === expected.byteLength && timingSafeEqual(candidate, expected)) return true;
    }
  }
  return false;
};

export const signHmac: SignHmac = (key, parts) => digest(createSecretKey(key), parts);

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
  // Decoding turns each invalid sequence into U+FFFD, so a text without one came from valid UTF-8:
  // the bytes are checked again (isUtf8, a second pass over them) only when it holds one.
  if (text.indexOf('\uFFFD') !== -1 && !isUtf8(bytes)) return undefined;
  return text;
};

export const randomHex: RandomHex = (bytes) => randomBytes(bytes).toString('hex');

export const decodeDigest: DecodeDigest = (text, encoding) => Buffer.from(text, encoding);

export const decodeBase64Digest: DecodeBase64Digest = (text) => {
  if (text.length !== 44 || text.charCodeAt(43) !== 0x3d) return undefined;
  // Buffer's decoder skips what is not base64 and stops at a `=`, so the 43 characters before the
  // last decode to 32 bytes only if every one of them is of the alphabet; it also takes the
  // URL-safe `-` and `_`, refused here. No loop over the characters in JavaScript: that loop was a
  // visible share of a delivery (bench/NOTES.md).
  const bytes = Buffer.from(text, 'base64');
  return bytes.byteLength === 32 && !text.includes('-') && !text.includes('_') ? bytes : undefined;
};
