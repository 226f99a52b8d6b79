import { randomUUID } from 'node:crypto';
import { JobhookError } from '../common/errors.js';
import { standardWebhooks } from '../signatures/standard-webhooks.js';
import type { SignedDelivery, Verifier } from '../signatures/verifier.js';

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
  /** The scheme to sign with. Default: `standardWebhooks()`; pass e.g. `hmacSha256({ header })`. */
  scheme?: Verifier;
}

/** Signs a test delivery; send `headers` and `body` as they are (with `fetch`, supertest, …). */
export function signDelivery(
  options: SignDeliveryOptions,
): SignedDelivery & { id: string; timestamp: number } {
  const scheme = options.scheme ?? standardWebhooks();
  if (!scheme.sign) throw new JobhookError('invalid_options', `The ${scheme.name} scheme cannot sign.`);
  // Bytes are copied into a plain ArrayBuffer-backed array, the form `fetch` and `Request` accept.
  const body =
    typeof options.payload === 'string'
      ? options.payload
      : options.payload instanceof Uint8Array
        ? new Uint8Array(options.payload)
        : JSON.stringify(options.payload);
  const id = options.id ?? `msg_${randomUUID().replaceAll('-', '')}`;
  const timestamp = options.timestamp ?? Math.floor(Date.now() / 1000);
  const signature = scheme.sign({ secret: options.secret, body, id, timestamp });
  return { headers: { 'content-type': 'application/json', ...signature }, body, id, timestamp };
}
