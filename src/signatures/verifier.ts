import type { HeaderReader } from '../wire/headers.js';

/** What a verifier is given for one delivery. */
export interface SignedRequest {
  headers: HeaderReader;
  /** The body exactly as received. */
  body: Uint8Array;
  /** The receiver's clock, in milliseconds since the epoch. */
  now: number;
  /** Allowed distance between a signed timestamp and `now`, in seconds, in both directions. */
  toleranceSeconds: number;
}

/**
 * A verifier's verdict. `id` (the sender's delivery id, when the scheme signs one) becomes the
 * dedupe key. `reason` is logged (at warn, with secrets redacted); only the reasons of jobhook's
 * own schemes are also shown to the sender, since a custom one might quote a signature.
 */
export type VerifyOutcome = { ok: true; id?: string | undefined } | { ok: false; reason: string };

/** Checks one delivery against secrets that were bound when the receiver was created. */
export type VerifyFunction = (request: SignedRequest) => VerifyOutcome | Promise<VerifyOutcome>;

/** A custom verifier written as one function: it is also given the secrets. `true` means valid. */
export type CustomVerifyFunction = (
  request: SignedRequest & { secrets: readonly string[] },
) => VerifyOutcome | boolean | Promise<VerifyOutcome | boolean>;

/** The headers and body of a signed delivery, ready to send (`fetch` accepts both body forms). */
export interface SignedDelivery {
  headers: Record<string, string>;
  body: Uint8Array<ArrayBuffer> | string;
}

/** What a scheme needs to sign one delivery. */
export interface SignInput {
  secret: string;
  body: Uint8Array | string;
  /** Delivery id, for schemes that sign one. */
  id: string;
  /** Unix seconds, for schemes that sign one. */
  timestamp: number;
}

/**
 * A signature scheme. `prepare` runs once per receiver and turns the secrets into a fast verify
 * function (keys are imported once, not per delivery). `sign` produces the headers a sender adds;
 * the testing kit and the gateway simulator sign with it, so each scheme has one implementation.
 */
export interface Verifier {
  /** A short name for messages, such as `standard-webhooks`. */
  readonly name: string;
  /** Runs once per receiver: binds the secrets and returns the check run on each delivery. */
  prepare(secrets: readonly string[]): VerifyFunction;
  /** The headers that sign one delivery; `signDelivery` and the gateway simulator use it. */
  sign?(input: SignInput): Record<string, string>;
}
