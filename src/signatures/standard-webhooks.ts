import { afterHmac, decodeBase64Digest, decodeDigest, signHmac, verifyHmac } from '#runtime';
import { isBase64Digest, toBase64 } from '../common/bytes.js';
import { optionNames, refuseUnknownOptions } from '../common/option-checks.js';
import {
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
import type { HeaderReader } from '../wire/headers.js';

const MAX_ID_LENGTH = 256;

/** Options of {@link standardWebhooks}. */
export interface StandardWebhooksOptions {
  /** How the secret becomes key bytes. Default `whsec-base64`; `utf8` for a sender signing with a `whsec_` text. */
  secretForm?: SecretForm;
}

const STANDARD_WEBHOOKS_OPTIONS = optionNames<StandardWebhooksOptions>()(['secretForm']);

/** Standard Webhooks v1, the default (Svix's names too): `v1,<base64>` of `${id}.${timestamp}.${body}`. */
export function standardWebhooks(options: StandardWebhooksOptions = {}): Verifier {
  refuseUnknownOptions(options, STANDARD_WEBHOOKS_OPTIONS, 'standardWebhooks');
  const secretForm = secretFormOption('standardWebhooks', options?.secretForm, 'whsec-base64');
  return {
    name: 'standard-webhooks',
    prepare(secrets) {
      const keys = hmacKeys(secrets, secretForm);
      const verify: VerifyFunction = (request) => {
        const set = headerSet(request.headers);
        if (set.ok === false) return set;
        const { id, timestamp, signature } = set;
        if (request.headersChecked !== true) {
          const refused = checkHeaderValues(request, set, true);
          if (refused) return refused;
        }
        const candidates = v1Signatures(signature!);
        if (candidates === undefined) return noWellFormedV1(set.prefix);
        const matched = verifyHmac(keys, [`${id}.${timestamp}.`, request.text ?? request.body], candidates);
        return afterHmac(matched, outcome, id);
      };
      verify.checkHeaders = checkStandardHeaders;
      return verify;
    },
    sign({ secret, body, id, timestamp }: SignInput) {
      const key = secretBytes(secret, 'signDelivery', secretForm);
      const digest = signHmac(key, [id, '.', String(timestamp), '.', body]);
      return afterHmac(digest, (bytes) => ({
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

interface HeaderSet {
  ok: true;
  prefix: 'webhook' | 'svix';
  id: string | undefined;
  timestamp: string | undefined;
  signature: string | undefined;
}

/** The `webhook-*` headers, or the `svix-*` ones when only those are signed; two sets must be equal. */
function headerSet(headers: HeaderReader): HeaderSet | VerifyRefusal {
  const id = headers.get('webhook-id');
  const timestamp = headers.get('webhook-timestamp');
  const signature = headers.get('webhook-signature');
  const svixSignature = headers.get('svix-signature');
  if (!svixSignature) {
    if (id || timestamp || signature) return { ok: true, prefix: 'webhook', id, timestamp, signature };
    const svixId = headers.get('svix-id');
    const svixTimestamp = headers.get('svix-timestamp');
    return svixId || svixTimestamp
      ? { ok: true, prefix: 'svix', id: svixId, timestamp: svixTimestamp, signature: undefined }
      : { ok: true, prefix: 'webhook', id, timestamp, signature };
  }
  const svixId = headers.get('svix-id');
  const svixTimestamp = headers.get('svix-timestamp');
  if (!signature && !id && !timestamp) {
    return { ok: true, prefix: 'svix', id: svixId, timestamp: svixTimestamp, signature: svixSignature };
  }
  if (id === svixId && timestamp === svixTimestamp && signature === svixSignature) {
    return { ok: true, prefix: 'webhook', id, timestamp, signature };
  }
  return refuse('malformed_header', 'The webhook-* and svix-* headers differ; a delivery carries one set.');
}

function checkStandardHeaders(request: HeaderCheckRequest): VerifyRefusal | undefined {
  const set = headerSet(request.headers);
  return set.ok === false ? set : checkHeaderValues(request, set);
}

/** `decodedNext`: the caller decodes (so checks) a lone v1 signature right after. */
function checkHeaderValues(
  { now, toleranceSeconds }: HeaderCheckRequest,
  { prefix, id, timestamp, signature }: HeaderSet,
  decodedNext = false,
): VerifyRefusal | undefined {
  if (!id || !timestamp || !signature) {
    const missing = [
      [id, 'id'],
      [timestamp, 'timestamp'],
      [signature, 'signature'],
    ]
      .filter(([value]) => !value)
      .map(([, name]) => `${prefix}-${name}`);
    return refuse('missing_header', `Missing header: ${missing.join(', ')}.`);
  }
  if (id.length > MAX_ID_LENGTH) return refuse('malformed_header', `The ${prefix}-id header is too long.`);
  const seconds = unixSeconds(timestamp);
  if (seconds === undefined) {
    return refuse('malformed_header', `The ${prefix}-timestamp header is not Unix seconds.`);
  }
  if (outsideTolerance(now, seconds, toleranceSeconds)) {
    return refuse('stale_timestamp', `The ${prefix}-timestamp ${timestamp} is outside the tolerance.`);
  }
  if (isSingleV1(signature)) {
    return decodedNext || isBase64Digest(signature, 3) ? undefined : noWellFormedV1(prefix);
  }
  return checkSignatureList(signature, prefix);
}

function checkSignatureList(header: string, prefix: HeaderSet['prefix']): VerifyRefusal | undefined {
  const entries = header.split(/\s+/).filter((entry) => entry !== '');
  if (entries.length > MAX_SIGNATURES) {
    return refuse(
      'malformed_header',
      `The ${prefix}-signature header carries ${entries.length} signatures; at most ${MAX_SIGNATURES} are read.`,
    );
  }
  return entries.some((entry) => isBase64Digest(v1Value(entry) ?? '')) ? undefined : noWellFormedV1(prefix);
}

function noWellFormedV1(prefix: HeaderSet['prefix']): VerifyRefusal {
  return refuse('malformed_header', `The ${prefix}-signature header holds no well-formed v1 signature.`);
}

/** The base64 of a `v1,<b64>` entry, `undefined` for other versions (tolerating the `, ` of joined headers). */
function v1Value(entry: string): string | undefined {
  if (!entry.startsWith('v1,')) return undefined;
  return entry.endsWith(',') ? entry.slice(3, -1) : entry.slice(3);
}

/** The usual header, one v1 signature: a header of this length is one signature or none. */
const SINGLE_V1_LENGTH = 'v1,'.length + 44;

function isSingleV1(header: string): boolean {
  return header.length === SINGLE_V1_LENGTH && header.startsWith('v1,');
}

/** The decoded well-formed v1 signatures of a header; `undefined` when a lone one is malformed. */
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
