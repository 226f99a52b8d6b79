/** A 429 from the gateway, with its Retry-After in ms when it gave one; `undefined` for any other failure. */
export function rateLimitOf(error: unknown): { retryAfterMs: number | undefined } | undefined {
  const failure = error as { status?: unknown; retryAfterSeconds?: unknown } | null | undefined;
  if (failure?.status !== 429) return undefined;
  const seconds = failure.retryAfterSeconds;
  return { retryAfterMs: typeof seconds === 'number' && seconds >= 0 ? seconds * 1000 : undefined };
}

/** The HTTP status of a gateway failure, 0 when it had none. */
export function statusOf(error: unknown): number {
  const status = (error as { status?: unknown } | null | undefined)?.status;
  return typeof status === 'number' ? status : 0;
}
