import { isUtf8 } from 'node:buffer';
import { randomUUID } from 'node:crypto';
import { JobhookError } from '../common/errors.js';
import { standardWebhooks } from '../signatures/standard-webhooks.js';
import type { SignedDelivery, Verifier } from '../signatures/verifier.js';

/** Options of {@link signDelivery}. */
export interface SignDeliveryOptions {
  /** The secret to sign with, in the form the receiver is given. */
  secret: string;
  /** An object is sent as JSON; a string or bytes (`Uint8Array`, `Buffer`) are sent exactly as given. */
  payload: unknown;
  /** Delivery id. Default: a fresh `msg_…`. */
  id?: string;
  /** Unix seconds. Default: now. */
  timestamp?: number;
  /** The scheme to sign with. Default: `standardWebhooks()`; pass e.g. `hmacSha256({ header })`. */
  scheme?: Verifier;
}

/**
 * Signs a test delivery; send `headers` and `body` as they are (with `fetch`, supertest, …). A payload
 * given as UTF-8 bytes comes back as the same text; other bytes (not JSON, which is UTF-8) as a
 * `Buffer` with `content-type: application/octet-stream`, so every client sends them unchanged.
 */
export function signDelivery(
  options: SignDeliveryOptions,
): SignedDelivery & { id: string; timestamp: number } {
  const scheme = options.scheme ?? standardWebhooks();
  if (!scheme.sign) throw new JobhookError('invalid_options', `The ${scheme.name} scheme cannot sign.`);
  const body =
    typeof options.payload === 'string'
      ? options.payload
      : options.payload instanceof Uint8Array
        ? bodyOfBytes(options.payload)
        : JSON.stringify(options.payload);
  const id = options.id ?? `msg_${randomUUID().replaceAll('-', '')}`;
  const timestamp = options.timestamp ?? Math.floor(Date.now() / 1000);
  const signature = scheme.sign({ secret: options.secret, body, id, timestamp });
  // JSON text is UTF-8 (RFC 8259): other bytes are labelled as what they are.
  const type = typeof body === 'string' ? 'application/json' : 'application/octet-stream';
  return { headers: { 'content-type': type, ...signature }, body, id, timestamp };
}

/**
 * Bytes as every HTTP client sends them unchanged. UTF-8 becomes the same text (it encodes back to
 * the same bytes): supertest sends a string as it is, but JSON-encodes a Uint8Array or a Buffer
 * under a JSON content type. Other bytes become a Buffer of their own (not a slice of Node's pool),
 * sent as `application/octet-stream`, which fetch and supertest send as it is.
 */
function bodyOfBytes(bytes: Uint8Array): Uint8Array<ArrayBuffer> | string {
  if (isUtf8(bytes)) return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('utf8');
  const copy = Buffer.alloc(bytes.byteLength);
  copy.set(bytes);
  return copy;
}
