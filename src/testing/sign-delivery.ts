import {
  checkOption,
  invalidOption,
  optionNames,
  refuseUnknownOptions,
  wholeNumber,
} from '../common/option-checks.js';
import { decodeUtf8, randomHex } from '#runtime';
import { isThenable } from '../common/deadline.js';
import type { SignedDelivery, Verifier } from '../signatures/verifier.js';
import { resolveSigning, signedHeaders, type Signing } from './signing.js';

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
  /** A family by name (default `'standard-webhooks'`), with parameters, or a Verifier that can sign. */
  scheme?: Signing | Verifier;
}

const WHERE = 'signDelivery';

/** A signed test delivery: send `headers` and `body` as they are. */
export type SignedTestDelivery = SignedDelivery & { id: string; timestamp: number };

const SIGN_DELIVERY_OPTIONS = optionNames<SignDeliveryOptions>()([
  'secret',
  'payload',
  'id',
  'timestamp',
  'scheme',
]);

/**
 * Signs a test delivery; send `headers` and `body` as they are (with `fetch`, supertest, …). UTF-8
 * bytes come back as text, other bytes as a `Buffer` sent as `application/octet-stream`. On Node,
 * Deno and Bun it returns at once; on Workers, Edge and in browsers `jobhook/testing` resolves to a
 * build whose `signDelivery` returns a promise.
 */
export function signDelivery(options: SignDeliveryOptions): SignedTestDelivery {
  refuseUnknownOptions(options, SIGN_DELIVERY_OPTIONS, 'signDelivery');
  const { signing, input, delivery } = prepare(options);
  const signature = signing.verifier?.sign!(input);
  // jobhook's schemes sign synchronously on Node; a Verifier of the caller's may not.
  if (isThenable(signature)) {
    throw invalidOption(WHERE, 'scheme', 'a scheme that signs synchronously on this runtime', options.scheme);
  }
  const signed = delivery(signing.headers(input, signature));
  // superagent (supertest) sends a Buffer as it is, but a plain Uint8Array as JSON.
  const { body } = signed;
  return typeof body === 'string' ? signed : { ...signed, body: Buffer.from(body.buffer) };
}

/** Signs a test delivery, awaiting the scheme: `jobhook/testing`'s `signDelivery` on Web runtimes. */
export async function signAnywhere(options: SignDeliveryOptions): Promise<SignedTestDelivery> {
  const { signing, input, delivery } = prepare(options);
  return delivery(await signedHeaders(signing, input));
}

function prepare(options: SignDeliveryOptions) {
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
  // JSON text is UTF-8 (RFC 8259): other bytes are labelled as what they are.
  const type = typeof body === 'string' ? 'application/json' : 'application/octet-stream';
  const delivery = (headers: Record<string, string>): SignedTestDelivery => ({
    headers: { 'content-type': type, ...headers },
    body,
    id,
    timestamp,
  });
  return { signing, input: { secret, body, id, timestamp }, delivery };
}

/** UTF-8 bytes become text (supertest JSON-encodes bytes under a JSON type); others are copied. */
function bodyOfBytes(bytes: Uint8Array): Uint8Array<ArrayBuffer> | string {
  const text = decodeUtf8(bytes);
  if (text !== undefined) return text;
  const copy = new Uint8Array(bytes.byteLength);
  copy.set(bytes);
  return copy;
}
