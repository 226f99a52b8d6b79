import { checkOption, oneOf } from '../common/option-checks.js';
import { fromBase64, utf8Bytes, whsecBytes } from '../common/bytes.js';
import { importHmacKeys } from '#runtime';
import type { HmacKeys } from '../runtime/contract.js';

const STANDARD_PREFIX = 'whsec_';

/**
 * How a secret becomes key bytes: `whsec-base64` (base64 after `whsec_`, else UTF-8; the default),
 * `utf8`, or `base64` (base64 after `whsec_` when it has one, and base64 without it too).
 */
export type SecretForm = 'whsec-base64' | 'utf8' | 'base64';

/** Every form a secret may be read in, the default first. */
export const SECRET_FORMS: readonly SecretForm[] = ['whsec-base64', 'utf8', 'base64'];

/** A preset's `secretForm` option, checked: `fallback` when absent. */
export function secretFormOption(where: string, value: unknown, fallback: SecretForm): SecretForm {
  return oneOf(where, 'secretForm', value, fallback, SECRET_FORMS);
}

/** The key bytes of a secret in `form` (default `whsec-base64`, the gateway's `secret_key` form). */
export function secretBytes(
  secret: string,
  where = 'createReceiver',
  form: SecretForm = 'whsec-base64',
): Uint8Array {
  if (form === 'base64') return base64SecretBytes(secret, where);
  if (form === 'utf8' || !secret.startsWith(STANDARD_PREFIX)) return utf8Bytes(secret);
  const bytes = whsecBytes(secret);
  const rule = 'base64 after the prefix when it starts with "whsec_" (the Standard Webhooks form)';
  checkOption(where, 'secret', secret, bytes !== undefined && bytes.byteLength > 0, rule);
  return bytes!;
}

/** The `base64` form: a gateway that base64-decodes every secret, after `whsec_` or without it. */
function base64SecretBytes(secret: string, where: string): Uint8Array {
  const encoded = secret.startsWith(STANDARD_PREFIX) ? secret.slice(STANDARD_PREFIX.length) : secret;
  const valid = encoded.length > 0 && /^[A-Za-z0-9+/]*={0,2}$/.test(encoded);
  const bytes = valid ? fromBase64(encoded) : undefined;
  const rule = 'base64, after "whsec_" when it starts with it (the secret form "base64")';
  checkOption(where, 'secret', secret, bytes !== undefined && bytes.byteLength > 0, rule);
  return bytes!;
}

/** Imported once per receiver so that each delivery's HMAC skips key preparation. */
export function hmacKeys(secrets: readonly string[], form: SecretForm = 'whsec-base64'): HmacKeys {
  return importHmacKeys(secrets.map((secret) => secretBytes(secret, 'createReceiver', form)));
}
