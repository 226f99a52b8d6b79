/**
 * What jobhook needs from the platform, in the two forms it ships: `node.ts` (node:crypto and
 * Buffer, synchronous, the fastest on Node) and `web.ts` (Web APIs only: crypto.subtle,
 * TextDecoder; for Workers, Edge, Deno, Bun and browsers). The core imports them as `#runtime`,
 * which package.json `imports` resolves per runtime through conditions. Both files implement these
 * types, so callers must accept a promise wherever the Web form gives one.
 */

/** Secrets' key bytes, imported once per receiver (a node:crypto KeyObject or a CryptoKey). */
export type HmacKeys = { readonly __brand: 'HmacKeys' };

/** Parts of the signed content, concatenated in order; strings count as their UTF-8 bytes. */
export type SignedParts = readonly (Uint8Array | string)[];

/** Imports HMAC-SHA256 keys once; `verifyHmac` then skips key preparation on each delivery. */
export type ImportHmacKeys = (keys: readonly Uint8Array[]) => HmacKeys;

/**
 * Whether any of `candidates` is the HMAC-SHA256 of `parts` under any of `keys`, compared in
 * constant time. One HMAC per key, whatever the number of candidates: the sender chooses how many
 * it writes. Synchronous on Node; a promise on the Web path (crypto.subtle is asynchronous).
 */
export type VerifyHmac = (
  keys: HmacKeys,
  parts: SignedParts,
  candidates: readonly Uint8Array[],
) => boolean | Promise<boolean>;

/** HMAC-SHA256 of `parts` under `key`, for signing. Synchronous on Node, a promise on the Web path. */
export type SignHmac = (key: Uint8Array, parts: SignedParts) => Uint8Array | Promise<Uint8Array>;

/** The bytes of a digest as written, already checked to be well-formed hex or padded base64. */
export type DecodeDigest = (text: string, encoding: 'hex' | 'base64') => Uint8Array;

/**
 * The 32 bytes of a digest written in padded standard base64 (43 characters of the alphabet, then
 * `=`), or `undefined` when `text` is anything else: URL-safe characters, no padding, whitespace,
 * another length.
 */
export type DecodeBase64Digest = (text: string) => Uint8Array | undefined;

/** The text of UTF-8 bytes, or `undefined` when they are not valid UTF-8. A BOM is kept. */
export type DecodeUtf8 = (bytes: Uint8Array) => string | undefined;

/** A random id of `bytes` random bytes in lower-case hex. */
export type RandomHex = (bytes: number) => string;
