import { randomHex } from '#runtime';
import { JobhookError } from '../common/errors.js';
import { isThenable } from '../common/thenable.js';
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

/** A signed test delivery: send `headers` and `body` as they are. */
export type SignedTestDelivery = SignedDelivery & { id: string; timestamp: number };

/**
 * Signs a test delivery. Synchronous where the scheme signs synchronously (jobhook's schemes on
 * Node, Deno and Bun); a promise where it signs with crypto.subtle (Workers, Edge, browsers).
 */
export function signAnywhere(options: SignDeliveryOptions): SignedTestDelivery | Promise<SignedTestDelivery> {
  const scheme = options.scheme ?? standardWebhooks();
  if (!scheme.sign) throw new JobhookError('invalid_options', `The ${scheme.name} scheme cannot sign.`);
  // Bytes are copied into a plain ArrayBuffer-backed array, the form `fetch` and `Request` accept.
  const body =
    typeof options.payload === 'string'
      ? options.payload
      : options.payload instanceof Uint8Array
        ? new Uint8Array(options.payload)
        : JSON.stringify(options.payload);
  const id = options.id ?? `msg_${randomHex(16)}`;
  const timestamp = options.timestamp ?? Math.floor(Date.now() / 1000);
  const signed = scheme.sign({ secret: options.secret, body, id, timestamp });
  const delivery = (signature: Record<string, string>): SignedTestDelivery => ({
    headers: { 'content-type': 'application/json', ...signature },
    body,
    id,
    timestamp,
  });
  return isThenable(signed) ? Promise.resolve(signed).then(delivery) : delivery(signed);
}

/**
 * Signs a test delivery; send `headers` and `body` as they are (with `fetch`, supertest, …).
 * On Node, Deno and Bun it returns the delivery at once. (On Workers, the Edge Runtime and in
 * browsers, `jobhook/testing` resolves to a build whose `signDelivery` returns a promise.)
 */
export function signDelivery(options: SignDeliveryOptions): SignedTestDelivery {
  const signed = signAnywhere(options);
  if (isThenable(signed)) {
    throw new JobhookError(
      'invalid_options',
      `The ${options.scheme?.name ?? 'standard-webhooks'} scheme signs asynchronously; signDelivery() needs a synchronous sign().`,
    );
  }
  return signed;
}
