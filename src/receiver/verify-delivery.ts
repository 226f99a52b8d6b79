import { messageOf } from '../common/logger.js';
import {
  refuse,
  type HeaderCheckRequest,
  type SignedRequest,
  type VerifyFunction,
  type VerifyOutcome,
  type VerifyRefusal,
} from '../signatures/verifier.js';
import { isThenable } from '../common/thenable.js';

/** The verifier's outcome, synchronously when it gave one so; a throw or rejection is a refusal. */
export function verifyDelivery(
  verify: VerifyFunction,
  request: SignedRequest,
): VerifyOutcome | PromiseLike<VerifyOutcome> {
  // A verifier that throws on malformed input (as Stripe's does on `t=,v1=`) is a 401, never a 500.
  const threw = (error: unknown): VerifyOutcome =>
    refuse('no_match', `The verifier threw: ${messageOf(error)}`);
  try {
    const outcome = verify(request);
    return isThenable(outcome) ? Promise.resolve(outcome).then(undefined, threw) : outcome;
  } catch (error) {
    return threw(error);
  }
}

/**
 * The refusal of a verifier's `checkHeaders` (the checks that need no body, run before it is read);
 * `undefined` to read on. A check that throws is a refusal, as `verify` is.
 */
export function runHeaderChecks(
  check: NonNullable<VerifyFunction['checkHeaders']>,
  request: HeaderCheckRequest,
): VerifyRefusal | undefined {
  try {
    return check(request) ?? undefined;
  } catch (error) {
    return refuse('no_match', `The verifier's header check threw: ${messageOf(error)}`);
  }
}
