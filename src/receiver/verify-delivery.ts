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
  try {
    const outcome = verify(request);
    return isThenable(outcome) ? Promise.resolve(outcome).then(undefined, verifierThrew) : outcome;
  } catch (error) {
    return verifierThrew(error);
  }
}

/**
 * A verifier that throws on malformed input (as Stripe's does on `t=,v1=`) is a 401, never a 500.
 * A function of its own, not a closure made on every delivery.
 */
function verifierThrew(error: unknown): VerifyOutcome {
  return refuse('no_match', `The verifier threw: ${messageOf(error)}`);
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
