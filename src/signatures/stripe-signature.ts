import { afterHmac, decodeDigest, signHmac, verifyHmac } from '#runtime';
import { toHex } from '../common/bytes.js';
import { checkOption, optionNames, refuseUnknownOptions } from '../common/option-checks.js';
import {
  isHexDigest,
  MAX_SIGNATURES,
  outsideTolerance,
  unixSeconds,
  refuse,
  type HeaderCheckRequest,
  type SignInput,
  type Verifier,
  type VerifyFunction,
  type VerifyOutcome,
  type VerifyRefusal,
} from './verifier.js';
import { hmacKeys, secretBytes, secretFormOption, type SecretForm } from './secret.js';

/** Options of {@link stripeSignature}. */
export interface StripeSignatureOptions {
  /** The header that carries `t=<unix>,v1=<hex>`. Default: `stripe-signature`. */
  header?: string;
  /** How the secret becomes key bytes. Default `utf8`, as Stripe does (the `whsec_` prefix included). */
  secretForm?: SecretForm;
}

const STRIPE_SIGNATURE_OPTIONS = optionNames<StripeSignatureOptions>()(['header', 'secretForm']);

const WHERE = 'stripeSignature';

interface TimestampedHeader {
  ok: true;
  timestamp: string;
  seconds: number;
  signatures: string[];
}

/** Stripe's `t=<seconds>,v1=<hex>` layout, signing `${t}.${body}`; the timestamp is judged both ways. */
export function stripeSignature(options: StripeSignatureOptions = {}): Verifier {
  refuseUnknownOptions(options, STRIPE_SIGNATURE_OPTIONS, WHERE);
  const given = options?.header ?? 'stripe-signature';
  const header = typeof given === 'string' ? given.toLowerCase() : '';
  checkOption(WHERE, 'header', given, header !== '', 'the name of the signature header');
  const secretForm = secretFormOption(WHERE, options?.secretForm, 'utf8');

  const read = (request: HeaderCheckRequest): TimestampedHeader | VerifyRefusal => {
    const value = request.headers.get(header)?.trim();
    if (!value) return refuse('missing_header', `Missing header: ${header}.`);
    return parseTimestamped(value, header);
  };
  const checkHeaders: VerifyFunction['checkHeaders'] = (request) => {
    const parsed = read(request);
    return parsed.ok === false ? parsed : checkTimestamp(request, parsed, header);
  };
  return {
    name: 'stripe',
    prepare(secrets) {
      const keys = hmacKeys(secrets, secretForm);
      const outcome = (matched: boolean): VerifyOutcome =>
        matched ? { ok: true } : refuse('no_match', `No ${header} v1 signature matches any secret.`);
      const verify: VerifyFunction = (request) => {
        const parsed = read(request);
        if (parsed.ok === false) return parsed;
        const stale = request.headersChecked === true ? undefined : checkTimestamp(request, parsed, header);
        if (stale) return stale;
        const candidates = parsed.signatures.map((hex) => decodeDigest(hex, 'hex'));
        const parts = [`${parsed.timestamp}.`, request.text ?? request.body];
        return afterHmac(verifyHmac(keys, parts, candidates), outcome);
      };
      verify.checkHeaders = checkHeaders;
      return verify;
    },
    sign({ secret, body, timestamp }: SignInput) {
      const key = secretBytes(secret, 'signDelivery', secretForm);
      return afterHmac(signHmac(key, [`${timestamp}.`, body]), (digest) => ({
        [header]: `t=${timestamp},v1=${toHex(digest)}`,
      }));
    },
  };
}

/** `t=<digits>,v1=<hex>[,…]`: exactly one `t`, at least one well-formed `v1`, at most 32 entries. */
function parseTimestamped(value: string, header: string): TimestampedHeader | VerifyRefusal {
  const entries = value.split(',');
  if (entries.length > MAX_SIGNATURES) {
    return refuse(
      'malformed_header',
      `The ${header} header carries ${entries.length} entries; at most ${MAX_SIGNATURES} are read.`,
    );
  }
  let timestamp: string | undefined;
  const signatures: string[] = [];
  for (const entry of entries) {
    const equals = entry.indexOf('=');
    const key = equals === -1 ? entry : entry.slice(0, equals);
    const written = equals === -1 ? '' : entry.slice(equals + 1);
    if (key === 't') {
      if (timestamp !== undefined)
        return refuse('malformed_header', `The ${header} header has two timestamps.`);
      timestamp = written;
    } else if (key === 'v1' && isHexDigest(written)) {
      signatures.push(written);
    }
  }
  const seconds = timestamp === undefined ? undefined : unixSeconds(timestamp);
  if (seconds === undefined) {
    return refuse('malformed_header', `The ${header} header has no t=<Unix seconds>.`);
  }
  if (signatures.length === 0) {
    return refuse('malformed_header', `The ${header} header holds no well-formed v1 signature.`);
  }
  return { ok: true, timestamp: timestamp!, seconds, signatures };
}

function checkTimestamp(
  { now, toleranceSeconds }: HeaderCheckRequest,
  { timestamp, seconds }: TimestampedHeader,
  header: string,
): VerifyRefusal | undefined {
  return outsideTolerance(now, seconds, toleranceSeconds)
    ? refuse('stale_timestamp', `The ${header} timestamp ${timestamp} is outside the tolerance.`)
    : undefined;
}
