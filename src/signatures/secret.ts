import { checkOption } from '../common/options.js';
import { fromBase64, utf8Bytes } from '../common/bytes.js';
import { importHmacKeys } from '#runtime';
import type { HmacKeys } from '../runtime/contract.js';

const STANDARD_PREFIX = 'whsec_';
const BASE64 = /^[A-Za-z0-9+/]*={0,2}$/;

/**
 * The key bytes of a secret: a `whsec_` secret is base64 after the prefix (the Standard Webhooks
 * form); any other string is used as its UTF-8 bytes (the gateway's `secret_key` form).
 */
export function secretBytes(secret: string, where = 'createReceiver'): Uint8Array {
  if (!secret.startsWith(STANDARD_PREFIX)) return utf8Bytes(secret);
  const encoded = secret.slice(STANDARD_PREFIX.length);
  const bytes = BASE64.test(encoded) ? fromBase64(encoded) : undefined;
  const rule = 'base64 after the prefix when it starts with "whsec_" (the Standard Webhooks form)';
  checkOption(where, 'secret', secret, bytes !== undefined && bytes.byteLength > 0, rule);
  return bytes!;
}

/** Imported once per receiver so that each delivery's HMAC skips key preparation. */
export function hmacKeys(secrets: readonly string[]): HmacKeys {
  return importHmacKeys(secrets.map((secret) => secretBytes(secret)));
}
