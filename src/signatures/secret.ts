import { createSecretKey, type KeyObject } from 'node:crypto';
import { JobhookError } from '../common/errors.js';

const STANDARD_PREFIX = 'whsec_';
const BASE64 = /^[A-Za-z0-9+/]*={0,2}$/;

/**
 * The key bytes of a secret: a `whsec_` secret is base64 after the prefix (the Standard Webhooks
 * form); any other string is used as its UTF-8 bytes (the gateway's `secret_key` form).
 */
export function secretBytes(secret: string): Buffer {
  if (!secret.startsWith(STANDARD_PREFIX)) return Buffer.from(secret, 'utf8');
  const encoded = secret.slice(STANDARD_PREFIX.length);
  if (encoded.length === 0 || encoded.length % 4 === 1 || !BASE64.test(encoded)) {
    throw new JobhookError(
      'invalid_options',
      'A secret that starts with "whsec_" must be base64 after the prefix (the Standard Webhooks form).',
    );
  }
  return Buffer.from(encoded, 'base64');
}

/** Imported once per receiver so that each delivery's HMAC skips key preparation. */
export function hmacKey(secret: string): KeyObject {
  return createSecretKey(secretBytes(secret));
}
