import { GatewayError } from './errors.js';
import { backoffDelay, sleep } from '../common/backoff.js';
import {
  checkOption,
  func,
  nonNegativeNumber,
  optionNames,
  refuseUnknownOptions,
  wholeNumber,
} from '../common/option-checks.js';

/** How the client retries a failed call; `retries: 0` turns retries off. */
export interface RetryOptions {
  /** Retries after the first attempt. Default 2. */
  limit?: number;
  /** Methods that may be retried. Default GET and DELETE: a re-sent POST could charge credits twice. */
  methods?: readonly string[];
  /** First backoff, in ms; each retry doubles it, with full jitter. Default 250. */
  baseDelayMs?: number;
  /** Longest wait, in ms. A Retry-After beyond it ends the retries instead. Default 30,000. */
  maxDelayMs?: number;
  /** How to wait; tests pass one that records the delay. Default: `sleep`, which stops on abort. */
  sleep?: (ms: number, signal: AbortSignal | undefined) => Promise<void>;
}

const RETRY_OPTIONS = optionNames<RetryOptions>()(['limit', 'methods', 'baseDelayMs', 'maxDelayMs', 'sleep']);

export interface ResolvedRetry {
  limit: number;
  methods: readonly string[];
  baseDelayMs: number;
  maxDelayMs: number;
  sleep: (ms: number, signal: AbortSignal | undefined) => Promise<void>;
}

/** Checks and completes `retries` (or `startupRetries`, as `name`): a NaN limit would never run out. */
export function resolveRetry(
  option: number | RetryOptions | undefined,
  where: string,
  name = 'retries',
): ResolvedRetry {
  const options: RetryOptions = typeof option === 'number' ? { limit: option } : (option ?? {});
  const rule = 'a number of retries (0 for none) or an object such as { limit: 2 }';
  checkOption(where, name, option, typeof options === 'object' && options !== null, rule);
  refuseUnknownOptions(options, RETRY_OPTIONS, `${where}'s \`${name}\``);
  const limitName = typeof option === 'number' ? name : `${name}.limit`;
  const limit = wholeNumber(where, limitName, options.limit, 2, {
    min: 0,
    unit: '0 turns retries off',
  });
  const methods = options.methods ?? ['GET', 'DELETE'];
  const listed = Array.isArray(methods) && methods.every((method) => typeof method === 'string');
  checkOption(where, `${name}.methods`, methods, listed, "a list of HTTP methods, such as ['GET', 'DELETE']");
  return {
    limit,
    methods: methods.map((method) => method.toUpperCase()),
    baseDelayMs: nonNegativeNumber(where, `${name}.baseDelayMs`, options.baseDelayMs, 250, { unit: 'ms' }),
    maxDelayMs: nonNegativeNumber(where, `${name}.maxDelayMs`, options.maxDelayMs, 30_000, { unit: 'ms' }),
    sleep: func(where, `${name}.sleep`, options.sleep) ?? sleep,
  };
}

/** Asking again would meet the same answer. */
const FINAL_CODES = new Set(['response_too_large', 'listing_too_large', 'redirect_refused']);

/** 429, 5xx, a lost connection or a time-out may pass; any other 4xx will not. */
export function isRetryable(error: GatewayError): boolean {
  if (FINAL_CODES.has(error.code)) return false;
  return error.status === 0 || error.status === 429 || error.status >= 500;
}

/** The gateway's Retry-After, else the backoff; undefined when Retry-After exceeds `maxDelayMs`. */
function retryDelay(retry: number, error: GatewayError, options: ResolvedRetry): number | undefined {
  if (error.retryAfterSeconds !== undefined) {
    const ms = error.retryAfterSeconds * 1000;
    return ms > options.maxDelayMs ? undefined : ms;
  }
  return backoffDelay({ firstMs: options.baseDelayMs, maxMs: options.maxDelayMs, jitter: 'full' }, retry);
}

/** The client's one retry loop (calls and startup registration): again while `isRetryable`. */
export async function withRetries<T>(
  attempt: () => Promise<T>,
  retry: ResolvedRetry,
  signal: AbortSignal | undefined,
  onRetry?: (error: GatewayError, retry: number, delayMs: number) => void,
  enough?: (error: GatewayError, retries: number) => boolean,
): Promise<T> {
  for (let retries = 0; ; retries++) {
    try {
      return await attempt();
    } catch (error) {
      if (!(error instanceof GatewayError) || !isRetryable(error) || retries >= retry.limit) throw error;
      if (enough?.(error, retries)) throw error;
      if (signal?.aborted) throw error;
      const delay = retryDelay(retries + 1, error, retry);
      if (delay === undefined) throw error;
      onRetry?.(error, retries + 1, delay);
      await retry.sleep(delay, signal);
    }
  }
}

/** A day: longer than any wait jobhook makes, and no sum with a time overflows a date. */
const MAX_RETRY_AFTER_SECONDS = 24 * 60 * 60;

/** Retry-After is seconds or an HTTP date (RFC 9110 10.2.3); a longer one reads as a day. */
export function parseRetryAfter(value: string | null, now = Date.now()): number | undefined {
  if (value === null) return undefined;
  const trimmed = value.trim();
  if (/^\d+$/.test(trimmed)) return Math.min(MAX_RETRY_AFTER_SECONDS, Number(trimmed));
  const date = Date.parse(trimmed);
  if (Number.isNaN(date)) return undefined;
  return Math.min(MAX_RETRY_AFTER_SECONDS, Math.max(0, Math.ceil((date - now) / 1000)));
}
