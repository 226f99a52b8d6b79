import { checkOption, oneOf, optionNames, refuseUnknownOptions } from '../common/option-checks.js';
import { afterHmac, decodeDigest, signHmac, verifyHmac } from '#runtime';
import { isBase64Digest, toBase64, toHex } from '../common/bytes.js';
import {
  isHexDigest,
  refuse,
  type SignInput,
  type Verifier,
  type VerifyFunction,
  type VerifyOutcome,
} from './verifier.js';
import { hmacKeys, secretBytes, secretFormOption, type SecretForm } from './secret.js';

/** Options of {@link hmacSha256}. */
export interface HmacSha256Options {
  /** The header that carries the signature, e.g. `x-signature` or `x-hub-signature-256`. */
  header: string;
  /** Text before the digest in the header, e.g. `sha256=`. Default: none. */
  prefix?: string;
  /** How the digest is written. Default: `hex`. */
  encoding?: 'hex' | 'base64';
  /** How the secret becomes key bytes. Default `whsec-base64`; `utf8` for a sender signing with a `whsec_` text. */
  secretForm?: SecretForm;
}

const isDigest = (text: string, encoding: 'hex' | 'base64') =>
  encoding === 'hex' ? isHexDigest(text) : isBase64Digest(text);

const HMAC_SHA256_OPTIONS = optionNames<HmacSha256Options>()(['header', 'prefix', 'encoding', 'secretForm']);

const WHERE = 'hmacSha256';

/** HMAC-SHA256 of the raw body in one header (GitHub's with `prefix: 'sha256='`); only dedupe stops replays. */
export function hmacSha256(options: HmacSha256Options): Verifier {
  refuseUnknownOptions(options, HMAC_SHA256_OPTIONS, WHERE);
  const header = typeof options?.header === 'string' ? options.header.toLowerCase() : '';
  checkOption(WHERE, 'header', options?.header, header !== '', 'the name of the signature header');
  const prefix = options.prefix ?? '';
  checkOption(WHERE, 'prefix', prefix, typeof prefix === 'string', 'a string');
  const encoding = oneOf(WHERE, 'encoding', options.encoding, 'hex', ['hex', 'base64']);
  const secretForm = secretFormOption(WHERE, options.secretForm, 'whsec-base64');
  const written = (value: string | undefined) => value?.trim().slice(prefix.length);
  const checkHeaders: VerifyFunction['checkHeaders'] = ({ headers }) => {
    const value = headers.get(header)?.trim();
    if (!value) return refuse('missing_header', `Missing header: ${header}.`);
    if (!value.startsWith(prefix) || !isDigest(value.slice(prefix.length), encoding)) {
      return refuse('malformed_header', `The ${header} header is not ${prefix}<${encoding} digest>.`);
    }
    return undefined;
  };
  return {
    name: 'hmac-sha256',
    prepare(secrets) {
      const keys = hmacKeys(secrets, secretForm);
      const outcome = (matched: boolean): VerifyOutcome =>
        matched ? { ok: true } : refuse('no_match', `No ${header} digest matches any secret.`);
      const verify: VerifyFunction = (request) => {
        const refused = request.headersChecked === true ? undefined : checkHeaders(request);
        if (refused) return refused;
        const candidate = decodeDigest(written(request.headers.get(header))!, encoding);
        return afterHmac(verifyHmac(keys, [request.text ?? request.body], [candidate]), outcome);
      };
      verify.checkHeaders = checkHeaders;
      return verify;
    },
    sign({ secret, body }: SignInput) {
      return afterHmac(signHmac(secretBytes(secret, 'signDelivery', secretForm), [body]), (digest) => ({
        [header]: prefix + (encoding === 'hex' ? toHex(digest) : toBase64(digest)),
      }));
    },
  };
}
