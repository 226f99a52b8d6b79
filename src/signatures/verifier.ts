import type { HeaderReader } from '../wire/headers.js';

/** What a verifier is given for one delivery. */
export interface SignedRequest {
  headers: HeaderReader;
  /** The body exactly as received. */
  body: Uint8Array;
  /** The body as the well-formed string the receiver was handed, if so (`body` is its UTF-8, made when read). */
  text?: string | undefined;
  /** The receiver's clock, in milliseconds since the epoch. */
  now: number;
  /** Allowed distance between a signed timestamp and `now`, in seconds, in both directions. */
  toleranceSeconds: number;
  /** `true` when this verifier's `checkHeaders` already passed on these headers, `now` and tolerance. */
  headersChecked?: boolean;
}

/** A refusal: `detail` goes to your logs only; the sender gets the fixed text of its {@link RefusalCode}. */
export interface VerifyRefusal {
  ok: false;
  code: RefusalCode;
  detail?: string | undefined;
}

/** A verifier's verdict; `id`, the delivery id when the scheme signs one, is its identity (`dedupeKey`). */
export type VerifyOutcome = { ok: true; id?: string | undefined } | VerifyRefusal;

/** What {@link VerifyFunction.checkHeaders} is given: everything but the body. */
export type HeaderCheckRequest = Omit<SignedRequest, 'body'>;

/** Checks one delivery against secrets that were bound when the receiver was created. */
export interface VerifyFunction {
  (request: SignedRequest): VerifyOutcome | Promise<VerifyOutcome>;
  /** The checks that need no body, run before it is read (an unsigned upload is never held); `undefined`: go on. */
  checkHeaders?: (request: HeaderCheckRequest) => VerifyRefusal | undefined;
}

/** A custom verifier written as one function, also given the secrets: `false` is a `no_match` refusal. */
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

/** A signature scheme: `prepare` binds the secrets once per receiver; `sign` makes a sender's headers. */
export interface Verifier {
  /** A short name for messages, such as `standard-webhooks`. */
  readonly name: string;
  /** Runs once per receiver: binds the secrets and returns the check run on each delivery. */
  prepare(secrets: readonly string[]): VerifyFunction;
  /** The headers that sign one delivery (a promise where only crypto.subtle computes an HMAC). */
  sign?(input: SignInput): Record<string, string> | Promise<Record<string, string>>;
}

/** A refusal, for verifiers to return. */
export function refuse(code: RefusalCode, detail?: string): VerifyRefusal {
  return detail === undefined ? { ok: false, code } : { ok: false, code, detail };
}

/** Why a signature was refused, from a closed list; the sender sees only each code's fixed text. */
export type RefusalCode = 'missing_header' | 'malformed_header' | 'stale_timestamp' | 'no_match';

const REFUSALS: Record<RefusalCode, string> = {
  missing_header: 'A signature header is missing.',
  malformed_header: 'A signature header is malformed.',
  stale_timestamp: 'The signed timestamp is outside the allowed tolerance; check the clocks.',
  no_match: 'No signature matches; check the secret.',
};

/** Whether `code` is one of the closed list (a custom verifier may return anything). */
export function isRefusalCode(code: unknown): code is RefusalCode {
  return typeof code === 'string' && Object.hasOwn(REFUSALS, code);
}

/** The text the sender gets for a refusal; `no_match`'s for anything off the list. */
export function refusalText(code: unknown): string {
  return isRefusalCode(code) ? REFUSALS[code] : REFUSALS.no_match;
}

/** Entries one signature header may carry: ten times a rotation's, bounding the work a stranger can ask for. */
export const MAX_SIGNATURES = 32;

/** A signed timestamp: 1 to 12 ASCII digits, nothing else (`Number` would take a sign or an exponent). */
export function unixSeconds(text: string): number | undefined {
  if (text.length === 0 || text.length > 12) return undefined;
  let seconds = 0;
  for (let i = 0; i < text.length; i++) {
    const digit = text.charCodeAt(i) - 0x30;
    if (digit < 0 || digit > 9) return undefined;
    seconds = seconds * 10 + digit;
  }
  return seconds;
}

/** Whether `seconds` lies further than the tolerance from `now` (ms), in either direction. */
export function outsideTolerance(now: number, seconds: number, toleranceSeconds: number): boolean {
  return Math.abs(now / 1000 - seconds) > toleranceSeconds;
}

const HEX_DIGEST = /^[0-9a-fA-F]{64}$/;

/** A 32-byte digest written in hex, of either case. */
export function isHexDigest(text: string): boolean {
  return HEX_DIGEST.test(text);
}
