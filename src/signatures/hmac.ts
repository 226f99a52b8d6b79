import { createHmac, timingSafeEqual, type KeyObject } from 'node:crypto';

/** HMAC-SHA256 over the concatenation of `parts`, without copying them into one buffer. */
export function hmacSha256Digest(key: KeyObject, parts: readonly (Uint8Array | string)[]): Buffer {
  const hmac = createHmac('sha256', key);
  for (const part of parts) hmac.update(part);
  return hmac.digest();
}

/** Constant-time equality of two byte strings. Length is not secret: a mismatch returns early. */
export function bytesEqual(a: Uint8Array, b: Uint8Array): boolean {
  return a.byteLength === b.byteLength && timingSafeEqual(a, b);
}
