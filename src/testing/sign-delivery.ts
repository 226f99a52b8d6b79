import {
  checkOption,
  invalidOption,
  optionNames,
  refuseUnknownOptions,
  wholeNumber,
} from '../common/errors.js';
import { decodeUtf8, randomHex } from '#runtime';
import { isThenable } from '../common/deadline.js';
import type { SignedDelivery, Verifier } from '../signatures/verifier.js';
import { resolveSigning, type Signing } from './signing.js';

/** Options of {@link signDelivery}. */
export interface SignDeliveryOptions {
  /** The secret to sign with, in the form the receiver is given. */
  secret: string;
  /** An object is sent as JSON; a string or bytes are sent exactly as given. */
  payload: unknown;
  /** Delivery id. Default: a fresh `msg_…`. */
  id?: string;
  /** Unix seconds. Default: now. */
  timestamp?: number;
  /**
   * The scheme to sign with: a family by name (`'standard-webhooks'`, the default, `'svix'`,
   * `'hmac-sha256'`, `'stripe'`, `'unsigned'`), a family with parameters
   * (`{ family: 'hmac-sha256', header: 'x-signature', prefix: '', encoding: 'base64' }`), or a
   * Verifier that can sign (`hmacSha256({ header })`, your own). `'unsigned'` ignores `secret`.
   */
  scheme?: Signing | Verifier;
}

const WHERE = 'signDelivery';

/** A signed test delivery: send `headers` and `body` as they are. */
export type SignedTestDelivery = SignedDelivery & { id: string; timestamp: number };

/**
 * Signs a test delivery. Synchronous where the scheme signs synchronously (jobhook's schemes on
 * Node, Deno and Bun); a promise where it signs with crypto.subtle (Workers, Edge, browsers).
 */
export function signAnywhere(options: SignDeliveryOptions): SignedTestDelivery | Promise<SignedTestDelivery> {
  const { secret } = options;
  checkOption(
    WHERE,
    'secret',
    secret,
    typeof secret === 'string' && secret !== '',
    'the secret to sign with',
  );
  const signing = resolveSigning(WHERE, 'scheme', options.scheme);
  const body =
    typeof options.payload === 'string'
      ? options.payload
      : options.payload instanceof Uint8Array
        ? bodyOfBytes(options.payload)
        : JSON.stringify(options.payload);
  const id = options.id ?? `msg_${randomHex(16)}`;
  checkOption(WHERE, 'id', id, typeof id === 'string' && id !== '', 'a non-empty string');
  const timestamp = wholeNumber(WHERE, 'timestamp', options.timestamp, Math.floor(Date.now() / 1000), {
    min: 0,
    unit: 'Unix seconds',
  });
  const signed = signing.headers({ secret, body, id, timestamp });
  // JSON text is UTF-8 (RFC 8259): other bytes are labelled as what they are.
  const type = typeof body === 'string' ? 'application/json' : 'application/octet-stream';
  const delivery = (signature: Record<string, string>): SignedTestDelivery => ({
    headers: { 'content-type': type, ...signature },
    body,
    id,
    timestamp,
  });
  return isThenable(signed) ? Promise.resolve(signed).then(delivery) : delivery(signed);
}

/**
 * Bytes as every HTTP client sends them unchanged. UTF-8 becomes the same text (it encodes back to
 * the same bytes): supertest sends a string as it is, but JSON-encodes a Uint8Array or a Buffer
 * under a JSON content type. Other bytes are copied into an array of their own, sent as
 * `application/octet-stream`.
 */
function bodyOfBytes(bytes: Uint8Array): Uint8Array<ArrayBuffer> | string {
  const text = decodeUtf8(bytes);
  if (text !== undefined) return text;
  const copy = new Uint8Array(bytes.byteLength);
  copy.set(bytes);
  return copy;
}

const SIGN_DELIVERY_OPTIONS = optionNames<SignDeliveryOptions>()([
  'secret',
  'payload',
  'id',
  'timestamp',
  'scheme',
]);

/**
 * Signs a test delivery; send `headers` and `body` as they are (with `fetch`, supertest, …). A
 * payload given as UTF-8 bytes comes back as the same text; other bytes (not JSON, which is UTF-8)
 * as a `Buffer` with `content-type: application/octet-stream`, so every client sends them
 * unchanged. On Node, Deno and Bun it returns the delivery at once. (On Workers, the Edge Runtime and in
 * browsers, `jobhook/testing` resolves to a build whose `signDelivery` returns a promise.)
 */
export function signDelivery(options: SignDeliveryOptions): SignedTestDelivery {
  refuseUnknownOptions(options, SIGN_DELIVERY_OPTIONS, 'signDelivery');
  const signed = signAnywhere(options);
  if (isThenable(signed)) {
    // On this runtime the scheme signs with crypto.subtle: the scheme is right, the call is not.
    throw invalidOption(WHERE, 'scheme', 'a scheme that signs synchronously on this runtime', options.scheme);
  }
  // superagent (supertest) sends a Buffer as it is, but a plain Uint8Array as JSON.
  const { body } = signed;
  return typeof body === 'string' ? signed : { ...signed, body: Buffer.from(body.buffer) };
}
