import { JobhookError } from '../common/errors.js';
import type { HeaderReader } from '../wire/headers.js';
import type { VerifyFunction } from '../signatures/verifier.js';

/** What a `secret` function is given: the delivery's headers and the URL it was sent to. */
export interface SecretLookupRequest {
  /** Case-insensitive access to the request's headers (`headers.get('webhook-id')`). */
  headers: HeaderReader;
  /**
   * The request's URL as the adapter saw it, absolute (`https://my.app/webhooks/acme?x=1`), or
   * `undefined` when `receive()` was called without one. Pick secrets by its path, not its host:
   * the host comes from a header the sender chose.
   */
  url: string | undefined;
}

/**
 * Picks the secrets for one delivery, for a receiver that serves several webhooks with their own
 * secrets (one per tenant, say). A string, a list (a rotation), or nothing: a delivery with no
 * secret is refused 401 `invalid_signature`, exactly as a wrong signature is. May be async; a throw
 * or a rejection is answered 500 (the sender retries), as is a lookup slower than `bodyTimeoutMs`.
 * jobhook does not cache what it returns: cache in the function if the lookup is costly.
 */
export type SecretLookup = (
  request: SecretLookupRequest,
) =>
  string | readonly string[] | null | undefined | PromiseLike<string | readonly string[] | null | undefined>;

/** The secrets a lookup gave, checked: a list of non-empty strings, possibly empty. */
export function lookedUpSecrets(given: unknown): readonly string[] {
  if (given === undefined || given === null) return [];
  const list: unknown[] = typeof given === 'string' ? [given] : Array.isArray(given) ? given : [given];
  if (!list.every((secret) => typeof secret === 'string' && secret.length > 0)) {
    throw new JobhookError(
      'invalid_options',
      'The `secret` function returned something other than a secret, a list of secrets or nothing.',
    );
  }
  return list as string[];
}

/**
 * Verifiers prepared per secret list, so that a lookup that returns the same secrets again reuses
 * the prepared keys. Bounded: past `max` lists the oldest is dropped (a platform with more tenants
 * than that prepares again, which is what an uncached receiver would do anyway). Every secret ever
 * prepared is added to `seen`, which the receiver's log and error redaction reads.
 */
export function preparedVerifiers(
  prepare: (secrets: readonly string[]) => VerifyFunction,
  seen: string[],
  max = 256,
): (secrets: readonly string[]) => VerifyFunction {
  const cache = new Map<string, VerifyFunction>();
  return (secrets) => {
    const key = secrets.join('\n');
    let verify = cache.get(key);
    if (verify === undefined) {
      verify = prepare(secrets);
      if (cache.size >= max) cache.delete(cache.keys().next().value!);
      cache.set(key, verify);
      for (const secret of secrets) if (!seen.includes(secret) && seen.length < 10_000) seen.push(secret);
    }
    return verify;
  };
}
