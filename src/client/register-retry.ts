import type { GatewayError } from './errors.js';
import { resolveRetry, withRetries, type RetryOptions } from './retry.js';

/**
 * How `registerWebhook` retries the whole registration while the gateway is unreachable or answers
 * 429 or 5xx, as it may while an app and the gateway start together. Each retry lists again
 * before it creates, so a retried registration still converges on one webhook.
 */
export interface StartupRetryOptions extends Omit<RetryOptions, 'methods'> {
  /** Called before each wait, to log that the gateway is not answering yet. */
  onRetry?: (error: GatewayError, retry: number, delayMs: number) => void;
}

/** Six retries, backing off from 0.5 s to at most 10 s with jitter: about 25 s at the longest. */
export const DEFAULT_STARTUP_RETRIES = { limit: 6, baseDelayMs: 500, maxDelayMs: 10_000 } as const;

/** Runs `attempt`, again after a backoff while it fails in a way the gateway may recover from. */
export async function withStartupRetries<T>(
  attempt: () => Promise<T>,
  option: number | false | StartupRetryOptions | undefined,
  signal: AbortSignal | undefined,
): Promise<T> {
  const given =
    option === false ? { limit: 0 } : typeof option === 'number' ? { limit: option } : (option ?? {});
  const retry = resolveRetry({ ...DEFAULT_STARTUP_RETRIES, ...given });
  return withRetries(attempt, retry, signal, given.onRetry);
}
