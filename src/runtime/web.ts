// The Web form of `#runtime` (see contract.ts): Web APIs only (crypto.subtle, TextEncoder,
// TextDecoder), no node:* import and no Buffer, so it loads unchanged on Cloudflare Workers, the
// Vercel Edge Runtime, Deno, Bun and browsers. crypto.subtle is asynchronous: verifying and signing
// give promises, which the receiver awaits (it awaits only thenables).
import { concatBytes, fromBase64, fromHex, isBase64Digest, toHex } from '../common/bytes.js';
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

const HMAC = { name: 'HMAC', hash: 'SHA-256' } as const;
const encoder = new TextEncoder();
const decoder = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });

function importKey(key: Uint8Array): Promise<CryptoKey> {
  return crypto.subtle.importKey('raw', key as Uint8Array<ArrayBuffer>, HMAC, false, ['sign']);
}

export const importHmacKeys: ImportHmacKeys = (keys) => {
  const imported = Promise.all(keys.map((key) => importKey(key)));
  // A key WebCrypto refuses (an empty one) fails each delivery's check, which answers 401; until a
  // delivery awaits it, the rejection must not count as unhandled.
  imported.catch(() => undefined);
  return imported as unknown as HmacKeys;
};

/**
 * One HMAC per key, each compared with every candidate in constant time. Not crypto.subtle.verify
 * per candidate: that computes the HMAC of the whole body again for each one, and the candidates
 * are whatever the sender wrote, secret or not.
 */
export const verifyHmac: VerifyHmac = async (keys, parts, candidates) => {
  const data = joinParts(parts);
  const expected = await Promise.all(
    (await (keys as unknown as Promise<CryptoKey[]>)).map((key) => crypto.subtle.sign('HMAC', key, data)),
  );
  let matched = false;
  for (const digest of expected) {
    const bytes = new Uint8Array(digest);
    for (const candidate of candidates) if (equalInConstantTime(candidate, bytes)) matched = true;
  }
  return matched;
};

/**
 * Whether two byte arrays are equal, in time that depends on their length only (the length of a
 * digest is no secret). Every byte is compared, so the time does not tell how many matched.
 */
function equalInConstantTime(a: Uint8Array, b: Uint8Array): boolean {
  if (a.byteLength !== b.byteLength) return false;
  let difference = 0;
  for (let i = 0; i < a.byteLength; i++) difference |= a[i]! ^ b[i]!;
  return difference === 0;
}

export const signHmac: SignHmac = async (key, parts) =>
  new Uint8Array(await crypto.subtle.sign('HMAC', await importKey(key), joinParts(parts)));

/** crypto.subtle takes one buffer: the parts, strings as UTF-8, end to end. */
function joinParts(parts: SignedParts): Uint8Array<ArrayBuffer> {
  const bytes = parts.map((part) => (typeof part === 'string' ? encoder.encode(part) : part));
  return concatBytes(bytes);
}

export const decodeUtf8: DecodeUtf8 = (bytes) => {
  try {
    return decoder.decode(bytes);
  } catch {
    return undefined;
  }
};

export const randomHex: RandomHex = (bytes) => toHex(crypto.getRandomValues(new Uint8Array(bytes)));

export const decodeDigest: DecodeDigest = (text, encoding) =>
  encoding === 'hex' ? fromHex(text) : (fromBase64(text) ?? new Uint8Array(0));

export const decodeBase64Digest: DecodeBase64Digest = (text) =>
  isBase64Digest(text) ? fromBase64(text) : undefined;
