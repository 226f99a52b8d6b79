// The Web form of `#runtime` (contract.ts): Web APIs only, for Workers, Edge, Deno, Bun and browsers.
import { concatBytes, fromBase64, fromHex, isBase64Digest, toHex } from '../common/bytes.js';
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

const HMAC = { name: 'HMAC', hash: 'SHA-256' } as const;
const encoder = new TextEncoder();
const decoder = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });

function importKey(key: Uint8Array): Promise<CryptoKey> {
  return crypto.subtle.importKey('raw', key as Uint8Array<ArrayBuffer>, HMAC, false, ['sign']);
}

export const importHmacKeys: ImportHmacKeys = (keys) => {
  const imported = Promise.all(keys.map((key) => importKey(key)));
  // A key WebCrypto refuses fails each delivery's check (401); until then it is no unhandled rejection.
  imported.catch(() => undefined);
  return imported as unknown as HmacKeys;
};

/** One HMAC per key, compared with each candidate: crypto.subtle.verify would hash the body once per candidate. */
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

/** Whether two byte arrays are equal, in time that depends on their (public) length only. */
function equalInConstantTime(a: Uint8Array, b: Uint8Array): boolean {
  if (a.byteLength !== b.byteLength) return false;
  let difference = 0;
  for (let i = 0; i < a.byteLength; i++) difference |= a[i]! ^ b[i]!;
  return difference === 0;
}

export const signHmac: SignHmac = async (key, parts) =>
  new Uint8Array(await crypto.subtle.sign('HMAC', await importKey(key), joinParts(parts)));

export const afterHmac: AfterHmac = <T, R, A>(
  result: T | Promise<T>,
  next: (value: T, arg: A) => R,
  arg?: A,
) => Promise.resolve(result).then((value) => next(value, arg as A));

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
