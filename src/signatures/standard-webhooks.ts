import { decodeBase64Digest, decodeDigest, signHmac, verifyHmac } from '#runtime';
import { isBase64Digest, toBase64 } from '../common/bytes.js';
import { andThen, isThenable } from '../common/thenable.js';
import { hmacKeys, secretBytes } from './secret.js';
import type { HeaderReader } from '../wire/headers.js';
import {
  refuse,
  type HeaderCheckRequest,
  type SignInput,
  type Verifier,
  type VerifyFunction,
  type VerifyOutcome,
  type VerifyRefusal,
} from './verifier.js';

const MAX_ID_LENGTH = 256;

/**
 * Entries one `webhook-signature` header may carry, of any version. A rotation signs with two or
 * three secrets at once; the cap leaves room for ten times that, and bounds the work a header
 * written by anyone, secret or not, can ask for.
 */
const MAX_SIGNATURES = 32;

/**
 * The Standard Webhooks v1 scheme (the one Svix and many senders use), jobhook's default:
 * headers `webhook-id`, `webhook-timestamp` (Unix seconds) and `webhook-signature`; the signed
 * content is `${id}.${timestamp}.${body}`, HMAC-SHA256, written `v1,<base64>`. The signature
 * header may hold several space-separated signatures (key rotation), at most 32 entries, refused
 * as `malformed_header` past that; any one valid one passes, and a delivery costs one HMAC per
 * secret however many it holds.
 * Signatures are decoded strictly, as the `standardwebhooks` package does: padded standard
 * base64 of 32 bytes, nothing else (no URL-safe alphabet, no missing padding, no junk).
 */
export function standardWebhooks(): Verifier {
  return {
    name: 'standard-webhooks',
    prepare(secrets) {
      const keys = hmacKeys(secrets);
      const verify: VerifyFunction = (request) => {
        const { headers } = request;
        // Each header read once: the checks and the signature use the same values.
        const id = headers.get('webhook-id');
        const timestamp = headers.get('webhook-timestamp');
        const signature = headers.get('webhook-signature');
        if (request.headersChecked !== true) {
          // The usual lone signature is checked as it is decoded, just below.
          const refused = checkHeaderValues(request, id, timestamp, signature, true);
          if (refused) return refused;
        }
        const candidates = v1Signatures(signature!);
        if (candidates === undefined) return noWellFormedV1();
        // Synchronous on Node; on the Web path crypto.subtle answers with a promise. The header
        // part as one string: each part is one `Hmac#update`, a call into C++ (bench/NOTES.md).
        // A body handed over as a string is hashed as it is, not copied into bytes first.
        const matched = verifyHmac(keys, [`${id}.${timestamp}.`, request.text ?? request.body], candidates);
        if (isThenable(matched)) return matched.then((ok) => outcome(ok, id!));
        return outcome(matched, id!);
      };
      verify.checkHeaders = checkStandardHeaders;
      return verify;
    },
    sign({ secret, body, id, timestamp }: SignInput) {
      const digest = signHmac(secretBytes(secret, 'signDelivery'), [id, '.', String(timestamp), '.', body]);
      return andThen(digest, (bytes) => ({
        'webhook-id': id,
        'webhook-timestamp': String(timestamp),
        'webhook-signature': `v1,${toBase64(bytes)}`,
      }));
    },
  };
}

function outcome(matched: boolean, id: string): VerifyOutcome {
  return matched ? { ok: true, id } : refuse('no_match', 'No v1 signature matches any secret.');
}

/** Everything that can be refused before the body is read. */
function checkStandardHeaders(request: HeaderCheckRequest): VerifyRefusal | undefined {
  const { headers } = request;
  return checkHeaderValues(
    request,
    headers.get('webhook-id'),
    headers.get('webhook-timestamp'),
    headers.get('webhook-signature'),
  );
}

/** `decodedNext`: a lone v1 signature is decoded (and so checked) by the caller right after. */
function checkHeaderValues(
  { headers, now, toleranceSeconds }: HeaderCheckRequest,
  id: string | undefined,
  timestamp: string | undefined,
  signature: string | undefined,
  decodedNext = false,
): VerifyRefusal | undefined {
  if (!id || !timestamp || !signature) return refuse('missing_header', missingHeaders(headers));
  if (id.length > MAX_ID_LENGTH) return refuse('malformed_header', 'The webhook-id header is too long.');
  const seconds = unixSeconds(timestamp);
  if (seconds === undefined) {
    return refuse('malformed_header', 'The webhook-timestamp header is not Unix seconds.');
  }
  if (Math.abs(now / 1000 - seconds) > toleranceSeconds) {
    return refuse('stale_timestamp', `The webhook-timestamp ${timestamp} is outside the tolerance.`);
  }
  if (isSingleV1(signature)) {
    return decodedNext || isBase64Digest(signature, 3) ? undefined : noWellFormedV1();
  }
  return checkSignatureList(signature);
}

/**
 * The value of a `webhook-timestamp` header: 1 to 12 ASCII digits, nothing else (no sign, space,
 * exponent or fraction, which `Number` would take). Read digit by digit: a regular expression
 * and then `Number` were two passes, on every delivery.
 */
function unixSeconds(text: string): number | undefined {
  if (text.length === 0 || text.length > 12) return undefined;
  let seconds = 0;
  for (let i = 0; i < text.length; i++) {
    const digit = text.charCodeAt(i) - 0x30;
    if (digit < 0 || digit > 9) return undefined;
    seconds = seconds * 10 + digit;
  }
  return seconds;
}

/** A header of several entries: within the cap, and with at least one well-formed v1 signature. */
function checkSignatureList(header: string): VerifyRefusal | undefined {
  const entries = header.split(/\s+/).filter((entry) => entry !== '');
  if (entries.length > MAX_SIGNATURES) {
    return refuse(
      'malformed_header',
      `The webhook-signature header carries ${entries.length} signatures; at most ${MAX_SIGNATURES} are read.`,
    );
  }
  return entries.some((entry) => isBase64Digest(v1Value(entry) ?? '')) ? undefined : noWellFormedV1();
}

function noWellFormedV1(): VerifyRefusal {
  return refuse('malformed_header', 'The webhook-signature header holds no well-formed v1 signature.');
}

function missingHeaders(headers: HeaderReader): string {
  const missing = ['webhook-id', 'webhook-timestamp', 'webhook-signature'].filter(
    (name) => !headers.get(name),
  );
  return `Missing header: ${missing.join(', ')}.`;
}

/** The base64 of a `v1,<b64>` entry; `undefined` for other versions. Tolerates the `, ` that joins repeated headers. */
function v1Value(entry: string): string | undefined {
  if (!entry.startsWith('v1,')) return undefined;
  return entry.endsWith(',') ? entry.slice(3, -1) : entry.slice(3);
}

/**
 * The usual header: one v1 signature and nothing else, 47 characters. A header of that shape is
 * one signature or none: an entry of a list is shorter.
 */
const SINGLE_V1_LENGTH = 'v1,'.length + 44;

function isSingleV1(header: string): boolean {
  return header.length === SINGLE_V1_LENGTH && header.startsWith('v1,');
}

/**
 * `v1,<b64> v1,<b64> v1a,<other>` to the decoded, well-formed v1 signatures, once the header
 * checks passed; `undefined` when the usual lone signature is not well formed (the checks leave it
 * to this decoding).
 */
function v1Signatures(header: string): Uint8Array[] | undefined {
  if (isSingleV1(header)) {
    const decoded = decodeBase64Digest(header.slice(3));
    return decoded && [decoded];
  }
  const signatures: Uint8Array[] = [];
  for (const entry of header.split(/\s+/)) {
    const encoded = v1Value(entry);
    if (encoded !== undefined && isBase64Digest(encoded)) signatures.push(decodeDigest(encoded, 'base64'));
  }
  return signatures;
}
