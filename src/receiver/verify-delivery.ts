import type { HeaderReader } from '../wire/headers.js';
import { messageOf } from '../common/logger.js';
import type { ResolvedOptions } from './options.js';
import type { VerifyOutcome } from '../signatures/verifier.js';
import { isThenable } from '../common/thenable.js';

/** What the sender is told when a custom verifier refuses: its own reason goes to the log only. */
export const UNVERIFIED = 'The signature could not be verified.';

/** The verifier's outcome, synchronously when it gave one so; a throw or rejection is a refusal. */
export function verifyDelivery(
  config: ResolvedOptions,
  verify: NonNullable<ResolvedOptions['verify']>,
  headers: HeaderReader,
  body: Uint8Array,
): VerifyOutcome | PromiseLike<VerifyOutcome> {
  // A verifier that throws on malformed input (as Stripe's does on `t=,v1=`) is a 401, never a 500.
  const threw = (error: unknown): VerifyOutcome => {
    config.logger.warn?.(`jobhook: the verifier threw: ${messageOf(error)}`);
    return { ok: false, reason: UNVERIFIED };
  };
  try {
    const outcome = verify({ headers, body, now: config.now(), toleranceSeconds: config.toleranceSeconds });
    return isThenable(outcome) ? Promise.resolve(outcome).then(undefined, threw) : outcome;
  } catch (error) {
    return threw(error);
  }
}
