import { messageOf } from '../common/logger.js';
import {
  refuse,
  type SignedRequest,
  type VerifyFunction,
  type VerifyOutcome,
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
