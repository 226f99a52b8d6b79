// What jobhook needs of the platform, as node.ts and web.ts implement it (`#runtime`, by package.json).

/** Secrets' key bytes, imported once per receiver (a node:crypto KeyObject or a CryptoKey). */
export type HmacKeys = { readonly __brand: 'HmacKeys' };

/** Parts of the signed content, concatenated in order; strings count as their UTF-8 bytes. */
export type SignedParts = readonly (Uint8Array | string)[];

/** Imports HMAC-SHA256 keys once; `verifyHmac` then skips key preparation on each delivery. */
export type ImportHmacKeys = (keys: readonly Uint8Array[]) => HmacKeys;

/** Whether any of `candidates` is the HMAC-SHA256 of `parts` under any of `keys`, in constant time. */
export type VerifyHmac = (
  keys: HmacKeys,
  parts: SignedParts,
  candidates: readonly Uint8Array[],
) => boolean | Promise<boolean>;

/** HMAC-SHA256 of `parts` under `key`, for signing. A promise on the Web form only. */
export type SignHmac = (key: Uint8Array, parts: SignedParts) => Uint8Array | Promise<Uint8Array>;

/** `next(result, arg)` once an HMAC's result is there: at once on Node, after the promise on the Web. */
export type AfterHmac = <T, R, A = undefined>(
  result: T | Promise<T>,
  next: (value: T, arg: A) => R,
  arg?: A,
) => R | Promise<R>;

/** The bytes of a digest as written, already checked to be well-formed hex or padded base64. */
export type DecodeDigest = (text: string, encoding: 'hex' | 'base64') => Uint8Array;

/** The 32 bytes of a digest in padded standard base64 (43 characters and `=`), or `undefined` for anything else. */
export type DecodeBase64Digest = (text: string) => Uint8Array | undefined;

/** The text of UTF-8 bytes, or `undefined` when they are not valid UTF-8. A BOM is kept. */
export type DecodeUtf8 = (bytes: Uint8Array) => string | undefined;

/** A random id of `bytes` random bytes in lower-case hex. */
export type RandomHex = (bytes: number) => string;
