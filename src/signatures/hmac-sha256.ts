import { hmacSha256Digest, bytesEqual } from './hmac.js';
import { preset } from './presets.js';
import { hmacKey } from './secret.js';
import { JobhookError } from '../common/errors.js';
import type { SignInput, Verifier, VerifyOutcome } from './verifier.js';

/** Options of {@link hmacSha256}. */
export interface HmacSha256Options {
  /** The header that carries the signature, e.g. `x-signature` or `x-hub-signature-256`. */
  header: string;
  /** Text before the digest in the header, e.g. `sha256=`. Default: none. */
  prefix?: string;
  /** How the digest is written. Default: `hex`. */
  encoding?: 'hex' | 'base64';
}

const HEX_DIGEST = /^[0-9a-fA-F]{64}$/;

/**
 * The common "HMAC-SHA256 of the raw body, hex or base64, in one header" scheme (GitHub-style
 * with `{ header: 'x-hub-signature-256', prefix: 'sha256=' }`). It signs no timestamp and no id,
 * so replays are stopped only by the dedupe store, keyed by the payload's `id`.
 */
export function hmacSha256(options: HmacSha256Options): Verifier {
  const header = options.header?.toLowerCase();
  if (!header)
    throw new JobhookError('invalid_options', 'hmacSha256() needs the name of the signature header.');
  const prefix = options.prefix ?? '';
  const encoding = options.encoding ?? 'hex';
  return preset({
    name: 'hmac-sha256',
    prepare(secrets) {
      const keys = secrets.map(hmacKey);
      return ({ headers, body }): VerifyOutcome => {
        const value = headers.get(header)?.trim();
        if (!value) return { ok: false, reason: `Missing header: ${header}.` };
        if (!value.startsWith(prefix)) return { ok: false, reason: `The ${header} header is malformed.` };
        const written = value.slice(prefix.length);
        if (encoding === 'hex' && !HEX_DIGEST.test(written)) {
          return { ok: false, reason: `The ${header} header is malformed.` };
        }
        const candidate = Buffer.from(written, encoding);
        for (const key of keys) {
          if (bytesEqual(candidate, hmacSha256Digest(key, [body]))) return { ok: true };
        }
        return { ok: false, reason: 'No signature matches.' };
      };
    },
    sign({ secret, body }: SignInput) {
      return { [header]: prefix + hmacSha256Digest(hmacKey(secret), [body]).toString(encoding) };
    },
  });
}
