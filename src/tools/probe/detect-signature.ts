/**
 * Which signature a captured delivery carries, found by verifying it with each preset and each
 * secret form, with the secret the probe registered: the presets are the one implementation of
 * each family, so what is found here is what the receiver will check. Nothing found: `unsigned`
 * when no header looks like a signature, else `unknown` with what was seen (names, lengths and
 * shapes, never a value) and, when a plain HMAC of a known layout matches, what it covers.
 */
import { createHmac } from 'node:crypto';
import {
  SECRET_FORMS,
  readHeaders,
  schemeVerifier,
  secretBytes,
  type SchemeName,
  type SecretForm,
  type Verifier,
} from 'jobhook/extend';
import type { CapturedDelivery } from './listener.js';

/** A header as the report may show it: its name, length and shape, never its value. */
export interface SeenHeader {
  name: string;
  length: number;
  /** The value with each run of digits, hex or base64 replaced by its kind and length: `v1,<base64:44>`. */
  shape: string;
}

/** What was learnt of the signature (the report's `signature`). */
export interface SignatureFinding {
  /** One of jobhook's presets (`SchemeParameters` describes each), or `unsigned` or `unknown`: none found. */
  scheme: SchemeName | 'unsigned' | 'unknown';
  /** The header that carries the signature, lower case; `null` when none was matched. */
  header: string | null;
  /** The headers of the scheme, for the families that sign an id and a timestamp. */
  headers: { id: string | null; timestamp: string | null; signature: string } | null;
  /** What the HMAC covers: `id.timestamp.body`, `timestamp.body` or `body`. */
  signedContent: 'id.timestamp.body' | 'timestamp.body' | 'body' | null;
  encoding: 'hex' | 'base64' | null;
  /** What the header holds around the digest: `v1,` for Standard Webhooks, `sha256=`, `''`, or Stripe's `t=<unix>,v1=`. */
  prefix: string | null;
  /** How the secret became the key: `whsec-base64` (base64 after `whsec_`, a plain one as text), `base64` (both decoded) or `utf8`. */
  secretForm: SecretForm | null;
  /** The signed timestamp minus the arrival time, in seconds (a sender's clock skew), when one is signed. */
  clockSkewSeconds: number | null;
  /** With `unsigned` and `unknown`: the headers that might carry a signature. */
  seen?: SeenHeader[];
  /** With `unknown`: what a plain HMAC-SHA256 with the secret matched, for a verifier of your own. */
  matched?: {
    header: string;
    signedContent: 'id.timestamp.body' | 'timestamp.body' | 'body';
    idHeader: string | null;
    timestampHeader: string | null;
    encoding: 'hex' | 'base64' | 'base64url';
    secretForm: SecretForm;
  };
  /** With `unknown`: a header that carries the registered secret itself, in place of a signature. */
  secretInHeader?: string;
}

/** Headers of transport and tracing: never a signature, whatever digits they hold. */
const NOT_SIGNATURES = new Set([
  'host',
  'content-type',
  'content-length',
  'user-agent',
  'accept',
  'accept-encoding',
  'connection',
  'transfer-encoding',
  'traceparent',
  'tracestate',
  'baggage',
  'sentry-trace',
  'x-request-id',
  'x-amzn-trace-id',
  'x-cloud-trace-context',
  'cf-ray',
  'via',
  'forwarded',
]);

const DIGEST_AT_END: readonly { encoding: 'hex' | 'base64'; pattern: RegExp }[] = [
  { encoding: 'hex', pattern: /^(.{0,32}?)([0-9a-fA-F]{64})$/ },
  { encoding: 'base64', pattern: /^(.{0,32}?)([A-Za-z0-9+/]{43}=)$/ },
];

export async function detectSignature(delivery: CapturedDelivery, secret: string): Promise<SignatureFinding> {
  const { headers } = delivery;
  const found =
    (await standardWebhooksFinding(delivery, secret)) ??
    (await stripeFinding(delivery, secret)) ??
    (await bodyHmacFinding(delivery, secret));
  if (found) return found;
  const seen = Object.entries(headers)
    .filter(([name, value]) => looksLikeSignature(name, value))
    .map(([name, value]) => ({ name, length: value.length, shape: shapeOf(value) }));
  const carrier = Object.entries(headers).find(([, value]) => value.includes(secret))?.[0];
  if (carrier !== undefined) return { ...finding('unknown', {}), seen, secretInHeader: carrier };
  if (seen.length === 0) return { ...finding('unsigned', {}), seen };
  const matched = plainHmacMatch(delivery, secret);
  return matched ? { ...finding('unknown', {}), seen, matched } : { ...finding('unknown', {}), seen };
}

/** A finding with every field in one order, `null` where nothing was learnt. */
function finding(
  scheme: SignatureFinding['scheme'],
  found: Partial<Omit<SignatureFinding, 'scheme' | 'seen' | 'matched' | 'secretInHeader'>>,
): SignatureFinding {
  return {
    scheme,
    header: found.header ?? null,
    headers: found.headers ?? null,
    signedContent: found.signedContent ?? null,
    encoding: found.encoding ?? null,
    prefix: found.prefix ?? null,
    secretForm: found.secretForm ?? null,
    clockSkewSeconds: found.clockSkewSeconds ?? null,
  };
}

/** Standard Webhooks, under its own names or Svix's. */
async function standardWebhooksFinding(
  delivery: CapturedDelivery,
  secret: string,
): Promise<SignatureFinding | undefined> {
  const names = ['webhook', 'svix'].find((prefix) => delivery.headers[`${prefix}-signature`] !== undefined);
  if (names === undefined) return undefined;
  for (const secretForm of SECRET_FORMS) {
    if (!(await verifies(schemeVerifier({ scheme: 'standard-webhooks', secretForm }), delivery, secret)))
      continue;
    return finding('standard-webhooks', {
      header: `${names}-signature`,
      headers: { id: `${names}-id`, timestamp: `${names}-timestamp`, signature: `${names}-signature` },
      signedContent: 'id.timestamp.body',
      encoding: 'base64',
      prefix: 'v1,',
      secretForm,
      clockSkewSeconds: skew(delivery, delivery.headers[`${names}-timestamp`]),
    });
  }
  return undefined;
}

/** Stripe's layout, `t=<unix>,v1=<hex>`, in any header. */
async function stripeFinding(
  delivery: CapturedDelivery,
  secret: string,
): Promise<SignatureFinding | undefined> {
  for (const [header, value] of Object.entries(delivery.headers)) {
    if (!/(?:^|,)\s*t=\d+/.test(value) || !/(?:^|,)\s*v1=/.test(value)) continue;
    for (const secretForm of SECRET_FORMS) {
      if (!(await verifies(schemeVerifier({ scheme: 'stripe', header, secretForm }), delivery, secret)))
        continue;
      return finding('stripe', {
        header,
        signedContent: 'timestamp.body',
        encoding: 'hex',
        prefix: 't=<unix>,v1=',
        secretForm,
        clockSkewSeconds: skew(delivery, /(?:^|,)\s*t=(\d+)/.exec(value)?.[1]),
      });
    }
  }
  return undefined;
}

/** The body's HMAC in any header, hex or base64, after any short prefix. */
async function bodyHmacFinding(
  delivery: CapturedDelivery,
  secret: string,
): Promise<SignatureFinding | undefined> {
  for (const [header, raw] of Object.entries(delivery.headers)) {
    if (NOT_SIGNATURES.has(header)) continue;
    const value = raw.trim();
    for (const { encoding, pattern } of DIGEST_AT_END) {
      const prefix = pattern.exec(value)?.[1];
      if (prefix === undefined) continue;
      for (const secretForm of SECRET_FORMS) {
        const verifier = schemeVerifier({ scheme: 'hmac-sha256', header, prefix, encoding, secretForm });
        if (!(await verifies(verifier, delivery, secret))) continue;
        return finding('hmac-sha256', { header, signedContent: 'body', encoding, prefix, secretForm });
      }
    }
  }
  return undefined;
}

async function verifies(verifier: Verifier, delivery: CapturedDelivery, secret: string): Promise<boolean> {
  try {
    const verify = verifier.prepare([secret]);
    // Any distance from the clock: the probe reports the skew rather than refuse it.
    const request = { headers: readHeaders(delivery.headers), body: delivery.body, now: delivery.at };
    const outcome = await verify({ ...request, toleranceSeconds: Number.POSITIVE_INFINITY });
    return outcome.ok;
  } catch {
    return false;
  }
}

function skew(delivery: CapturedDelivery, timestamp: string | undefined): number | null {
  if (timestamp === undefined || !/^\d{1,12}$/.test(timestamp)) return null;
  return Math.round(Number(timestamp) - delivery.at / 1000);
}

/** Names that say signature, or values that hold a run long enough to be a digest. */
function looksLikeSignature(name: string, value: string): boolean {
  if (NOT_SIGNATURES.has(name)) return false;
  if (/sig|hmac|digest|hash|auth|token/i.test(name)) return true;
  // A delivery id (a UUID, or a header named like an id) is long and random, yet signs nothing.
  if (/(^|-)(id|uuid)$/i.test(name) || UUID.test(value.trim())) return false;
  return /[0-9a-fA-F]{32}|[A-Za-z0-9+/_-]{27}/.test(value);
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** `value` with each run replaced by its kind and length, so that no digest or token is shown. */
export function shapeOf(value: string): string {
  return value
    .replace(/[A-Za-z0-9+/_-]{8,}={0,2}/g, (run) => {
      if (/^\d+$/.test(run)) return `<digits:${run.length}>`;
      if (/^[0-9a-fA-F]+$/.test(run)) return `<hex:${run.length}>`;
      return `<base64:${run.length}>`;
    })
    .slice(0, 200);
}

/**
 * A plain HMAC-SHA256 with the secret, of the body, `${t}.${body}` or `${id}.${t}.${body}` (with
 * any header that holds Unix seconds as `t` and any header named like an id as `id`), found
 * written in some header in hex, base64 or base64url: a layout no preset reads, described so that
 * a verifier can be written for it.
 */
function plainHmacMatch(delivery: CapturedDelivery, secret: string): SignatureFinding['matched'] {
  const entries = Object.entries(delivery.headers).filter(([name]) => !NOT_SIGNATURES.has(name));
  const stamps = entries.filter(([, value]) => /^\d{9,13}$/.test(value.trim()));
  const ids = entries.filter(([name, value]) => /id$|delivery/i.test(name) && value.length <= 256);
  const contents: {
    signedContent: 'id.timestamp.body' | 'timestamp.body' | 'body';
    id: string | null;
    t: string | null;
    text: string;
  }[] = [
    { signedContent: 'body', id: null, t: null, text: '' },
    ...stamps.map(([t, value]) => ({
      signedContent: 'timestamp.body' as const,
      id: null,
      t,
      text: `${value.trim()}.`,
    })),
    ...stamps.flatMap(([t, stamp]) =>
      ids.map(([id, value]) => ({
        signedContent: 'id.timestamp.body' as const,
        id,
        t,
        text: `${value}.${stamp.trim()}.`,
      })),
    ),
  ];
  for (const secretForm of SECRET_FORMS) {
    const key = keyOf(secret, secretForm);
    if (key === undefined) continue;
    for (const content of contents) {
      const digest = createHmac('sha256', key).update(content.text).update(delivery.body).digest();
      const written = {
        hex: digest.toString('hex'),
        base64: digest.toString('base64'),
        base64url: digest.toString('base64url'),
      };
      for (const [header, value] of entries) {
        for (const encoding of ['hex', 'base64', 'base64url'] as const) {
          const text = encoding === 'hex' ? value.toLowerCase() : value;
          if (!text.includes(written[encoding])) continue;
          return {
            header,
            signedContent: content.signedContent,
            idHeader: content.id,
            timestampHeader: content.t,
            encoding,
            secretForm,
          };
        }
      }
    }
  }
  return undefined;
}

/** The key bytes of `secret` in `form`, as the presets make them; none for a `whsec_` secret that is not base64. */
function keyOf(secret: string, form: SecretForm): Uint8Array | undefined {
  try {
    return secretBytes(secret, 'probe', form);
  } catch {
    return undefined;
  }
}
