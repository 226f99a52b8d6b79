import type { HeaderReader } from '../wire/headers.js';
import type { RefusalCode } from './refusals.js';

/** What a verifier is given for one delivery. */
export interface SignedRequest {
  headers: HeaderReader;
  /** The body exactly as received. */
  body: Uint8Array;
  /**
   * The body as the string the receiver was handed, when it was given one (as serverless
   * platforms hand it) and it is well formed: `body` is then its UTF-8 encoding, made only when
   * read. A verifier that can hash a string (node:crypto's `Hmac#update` can) may use this
   * rather than `body` and spare the copy. `undefined` for a body given or read as bytes.
   */
  text?: string | undefined;
  /** The receiver's clock, in milliseconds since the epoch. */
  now: number;
  /** Allowed distance between a signed timestamp and `now`, in seconds, in both directions. */
  toleranceSeconds: number;
  /**
   * `true` when the receiver already ran this verifier's own `checkHeaders` on these headers, with
   * this `now` and tolerance, before reading the body, and it passed: the verifier may skip those
   * checks rather than make them twice. Absent otherwise (a body given in hand, no `checkHeaders`).
   */
  headersChecked?: boolean;
}

export type { RefusalCode } from './refusals.js';

/**
 * A refusal. `detail` is for your logs only (it is logged at `warn`, with secrets redacted) and is
 * never sent to the sender, so it may name a header or a value; the answer text comes from
 * {@link RefusalCode} alone.
 */
export interface VerifyRefusal {
  ok: false;
  code: RefusalCode;
  detail?: string | undefined;
}

/**
 * A verifier's verdict. `id` (the sender's delivery id, when the scheme signs one) is the
 * delivery's identity: see the receiver's `dedupeKey` option.
 */
export type VerifyOutcome = { ok: true; id?: string | undefined } | VerifyRefusal;

/** What {@link VerifyFunction.checkHeaders} is given: everything but the body. */
export type HeaderCheckRequest = Omit<SignedRequest, 'body'>;

/** Checks one delivery against secrets that were bound when the receiver was created. */
export interface VerifyFunction {
  (request: SignedRequest): VerifyOutcome | Promise<VerifyOutcome>;
  /**
   * Optional: the checks that need no body (headers present and well formed, timestamp within the
   * tolerance). The receiver runs it before reading the body, so an unsigned or stale request is
   * refused without holding memory for its upload. A refusal, or `undefined` to go on.
   */
  checkHeaders?: (request: HeaderCheckRequest) => VerifyRefusal | undefined;
}

/**
 * A custom verifier written as one function: it is also given the secrets. `true` means valid,
 * `false` a refusal with code `no_match`.
 */
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
  /**
   * The headers that sign one delivery; `signDelivery` and the gateway simulator use it. jobhook's
   * schemes sign synchronously on Node, Deno and Bun, and give a promise on Workers, the Edge
   * Runtime and in browsers, where only the asynchronous crypto.subtle can compute an HMAC.
   */
  sign?(input: SignInput): Record<string, string> | Promise<Record<string, string>>;
}

/** A refusal, for verifiers to return. */
export function refuse(code: RefusalCode, detail?: string): VerifyRefusal {
  return detail === undefined ? { ok: false, code } : { ok: false, code, detail };
}
