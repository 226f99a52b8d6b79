import { hmacSha256Digest, bytesEqual } from './hmac.js';
import { hmacKey } from './secret.js';
import { JobhookError } from '../common/errors.js';
import {
  refuse,
  type SignInput,
  type Verifier,
  type VerifyFunction,
  type VerifyOutcome,
} from './verifier.js';

/** Options of {@link hmacSha256}. */
export interface HmacSha256Options {
  /** The header that carries the signature, e.g. `x-signature` or `x-hub-signature-256`. */
  header: string;
  /** Text before the digest in the header, e.g. `sha256=`. Default: none. */
  prefix?: string;
  /** How the digest is written. Default: `hex`. */
  encoding?: 'hex' | 'base64';
}

/** A 32-byte digest as written: hex of either case, or padded standard base64. Nothing else decodes. */
const DIGEST = { hex: /^[0-9a-fA-F]{64}$/, base64: /^[A-Za-z0-9+/]{43}=$/ };

/**
 * The common "HMAC-SHA256 of the raw body, hex or base64, in one header" scheme (GitHub-style
 * with `{ header: 'x-hub-signature-256', prefix: 'sha256=' }`). It signs no timestamp and no id,
 * so replays are stopped only by the dedupe store, keyed by the payload's `id`.
 */
export function hmacSha256(options: HmacSha256Options): Verifier {
  const header = typeof options?.header === 'string' ? options.header.toLowerCase() : '';
  if (!header) {
    throw new JobhookError('invalid_options', 'hmacSha256() needs the name of the signature header.');
  }
  const prefix = options.prefix ?? '';
  const encoding = options.encoding ?? 'hex';
  if (encoding !== 'hex' && encoding !== 'base64') {
    throw new JobhookError('invalid_options', 'hmacSha256() `encoding` must be "hex" or "base64".');
  }
  const written = (value: string | undefined) => value?.trim().slice(prefix.length);
  const checkHeaders: VerifyFunction['checkHeaders'] = ({ headers }) => {
    const value = headers.get(header)?.trim();
    if (!value) return refuse('missing_header', `Missing header: ${header}.`);
    if (!value.startsWith(prefix) || !DIGEST[encoding].test(value.slice(prefix.length))) {
      return refuse('malformed_header', `The ${header} header is not ${prefix}<${encoding} digest>.`);
    }
    return undefined;
  };
  return {
    name: 'hmac-sha256',
    prepare(secrets) {
      const keys = secrets.map(hmacKey);
      const verify: VerifyFunction = (request): VerifyOutcome => {
        const refused = checkHeaders(request);
        if (refused) return refused;
        const candidate = Buffer.from(written(request.headers.get(header))!, encoding);
        for (const key of keys) {
          if (bytesEqual(candidate, hmacSha256Digest(key, [request.body]))) return { ok: true };
        }
        return refuse('no_match', `No ${header} digest matches any secret.`);
      };
      verify.checkHeaders = checkHeaders;
      return verify;
    },
    sign({ secret, body }: SignInput) {
      return { [header]: prefix + hmacSha256Digest(hmacKey(secret), [body]).toString(encoding) };
    },
  };
}
