/**
 * The longest the reconciler stops for a 429, whatever Retry-After says: a gateway that asks for a
 * year (or sends a number too large to be a date) must not stop polling for longer than a few
 * minutes; a gateway still limiting then answers 429 again, and the pause starts over.
 */
export const MAX_RATE_LIMIT_PAUSE_MS = 5 * 60 * 1000;

/**
 * A 429 from the gateway, with its Retry-After in ms (at most {@link MAX_RATE_LIMIT_PAUSE_MS})
 * when it gave one; `undefined` for any other failure.
 */
export function rateLimitOf(error: unknown): { retryAfterMs: number | undefined } | undefined {
  const failure = error as { status?: unknown; retryAfterSeconds?: unknown } | null | undefined;
  if (failure?.status !== 429) return undefined;
  const seconds = failure.retryAfterSeconds;
  const given = typeof seconds === 'number' && seconds >= 0; // NaN is not >= 0
  return { retryAfterMs: given ? Math.min(MAX_RATE_LIMIT_PAUSE_MS, seconds * 1000) : undefined };
}

/** The HTTP status of a gateway failure, 0 when it had none. */
export function statusOf(error: unknown): number {
  const status = (error as { status?: unknown } | null | undefined)?.status;
  return typeof status === 'number' ? status : 0;
}
