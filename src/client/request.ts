import { optionNames, positiveNumber, refuseUnknownOptions, isRecord } from '../common/errors.js';
import { redactCause, redactor, type Redact } from '../common/logging.js';
import {
  GatewayError,
  GatewayNetworkError,
  GatewayRedirectError,
  GatewayResponseTooLargeError,
  GatewayTimeoutError,
  listingTooLarge,
} from './errors.js';
import { readBodyCapped } from './read-body.js';
import { fetchSameOrigin } from './redirects.js';
import {
  parseRetryAfter,
  resolveRetry,
  withRetries,
  type ResolvedRetry,
  type RetryOptions,
} from './retry.js';
import { eitherSignal } from './any-signal.js';

/** Per-call options, accepted as the last argument of every client method. */
export interface RequestOptions {
  /** Aborts the call (and any wait between retries); the call rejects with the signal's reason. */
  signal?: AbortSignal;
  /** Overrides the client's `timeoutMs` for this call. */
  timeoutMs?: number;
  /** Overrides the client's `retries` for this call. */
  retries?: number | RetryOptions;
}

export interface TransportConfig {
  apiKey: string;
  /** Replaces every form of the API key in a text: applied to every message the transport builds. */
  redactKey: Redact;
  baseUrl: string;
  fetch: typeof fetch;
  timeoutMs: number;
  retry: ResolvedRetry;
  /** Longest answer body read, in bytes. */
  maxResponseBytes: number;
}

/**
 * What the calls of one listing may read in all (src/client/pages.ts): every page's body counts,
 * and a page longer than what is left fails with `listing_too_large`.
 */
export interface ListingBudget {
  /** Bytes read so far by the listing's calls. */
  bytes: number;
}

export type Transport = <T>(
  method: string,
  path: string,
  body?: unknown,
  options?: RequestOptions,
  budget?: ListingBudget,
) => Promise<T>;

const REQUEST_OPTIONS = optionNames<RequestOptions>()(['signal', 'timeoutMs', 'retries']);

/** Where a call's own options (its last argument) are named in a message. */
const CALL = "a client call's options (the last argument)";

/** One gateway call: envelope in, `data` or a GatewayError out, with time-outs and retries. */
export function createTransport(config: TransportConfig): Transport {
  const { redactKey } = config;
  return async function request<T>(
    method: string,
    path: string,
    body?: unknown,
    options: RequestOptions = {},
    budget?: ListingBudget,
  ) {
    refuseUnknownOptions(options, REQUEST_OPTIONS, CALL);
    const retry = options.retries === undefined ? config.retry : resolveRetry(options.retries, CALL);
    // A webhook's secret_key rides in the body; a gateway that echoes the request must not leak it.
    const secret = isRecord(body) && typeof body.secret_key === 'string' ? body.secret_key : undefined;
    const redact = secret === undefined ? redactKey : redactor([config.apiKey, secret]);
    const call = () => once(config, redact, method, path, body, options, budget) as Promise<T>;
    return retry.methods.includes(method) ? withRetries(call, retry, options.signal) : call();
  };
}

async function once(
  config: TransportConfig,
  redact: Redact,
  method: string,
  path: string,
  body: unknown,
  options: RequestOptions,
  budget: ListingBudget | undefined,
) {
  const timeoutMs = positiveNumber(CALL, 'timeoutMs', options.timeoutMs, config.timeoutMs, { unit: 'ms' });
  const timer = new AbortController();
  const timeout = setTimeout(() => timer.abort(), timeoutMs);
  const either = options.signal ? eitherSignal(options.signal, timer.signal) : undefined;
  const signal = either ? either.signal : timer.signal;
  const headers: Record<string, string> = {
    authorization: `Bearer ${config.apiKey}`,
    accept: 'application/json',
  };
  if (body !== undefined) headers['content-type'] = 'application/json';
  const what = `${method} ${path}`;
  // A listing's pages share one cap: what its earlier pages read is not read again.
  const maxBytes = config.maxResponseBytes - (budget?.bytes ?? 0);
  try {
    let response: Response;
    let text: string | undefined;
    try {
      const answer = await fetchSameOrigin(config.fetch, config.baseUrl + path, {
        method,
        headers,
        body: body === undefined ? undefined : JSON.stringify(body),
        signal,
      });
      if ('refused' in answer) {
        const { status, reason } = answer.refused;
        throw new GatewayRedirectError(
          redact(`${what} failed (${status} redirect_refused): the gateway ${reason}.`),
          status,
        );
      }
      response = answer.response;
      text = await readBodyCapped(response, maxBytes, budget);
    } catch (error) {
      if (error instanceof GatewayError) throw error;
      // The caller's own abort is not a gateway failure: it surfaces as the caller's reason.
      if (options.signal?.aborted) throw options.signal.reason;
      if (timer.signal.aborted)
        throw new GatewayTimeoutError(redact(`${what}: no answer from the gateway within ${timeoutMs} ms.`));
      // The cause is a redacted copy: what fetch (or a fetch you passed) threw may quote the headers.
      throw new GatewayNetworkError(
        redact(`${what}: could not reach the gateway (${describe(error)}).`),
        redactCause(error, redact),
      );
    }
    if (text === undefined && maxBytes < config.maxResponseBytes) {
      throw listingTooLarge(
        redact(what),
        response.status,
        `its pages are longer than maxResponseBytes (${config.maxResponseBytes} bytes) in all`,
      );
    }
    if (text === undefined) {
      throw new GatewayResponseTooLargeError(
        redact(
          `${what} failed (${response.status} response_too_large): the answer is longer than ` +
            `maxResponseBytes (${config.maxResponseBytes} bytes); the client stopped reading it.`,
        ),
        response.status,
        redactHeader(response, 'x-request-id', redact),
      );
    }
    return unwrap(response, text, what, redact);
  } finally {
    clearTimeout(timeout);
    either?.dispose();
  }
}

/** The envelope's `data`, or a GatewayError built from its `error` and `request_id`. */
function unwrap(response: Response, text: string, what: string, redact: Redact): unknown {
  let envelope: unknown;
  try {
    envelope = text.length > 0 ? JSON.parse(text) : undefined;
  } catch {
    envelope = undefined;
  }
  const record = isRecord(envelope) ? envelope : {};
  const requestId =
    typeof record.request_id === 'string'
      ? redact(record.request_id)
      : redactHeader(response, 'x-request-id', redact);
  if (response.ok && record.success === true) return record.data;
  const error = isRecord(record.error) ? record.error : {};
  const code =
    typeof error.code === 'string'
      ? redact(error.code)
      : response.ok
        ? 'invalid_response'
        : `http_${response.status}`;
  const detail =
    typeof error.message === 'string'
      ? error.message
      : response.ok
        ? 'the answer is not the gateway envelope'
        : `HTTP ${response.status}`;
  // Every part of the message may be the gateway's text: redact the whole of it.
  throw new GatewayError(redact(`${what} failed (${response.status} ${code}): ${detail}`), {
    status: response.status,
    code,
    requestId,
    retryAfterSeconds: parseRetryAfter(response.headers.get('retry-after')),
  });
}

function redactHeader(response: Response, name: string, redact: Redact): string | undefined {
  const value = response.headers.get(name);
  return value === null ? undefined : redact(value);
}

function describe(error: unknown): string {
  const cause = (error as { cause?: { code?: unknown } } | undefined)?.cause;
  if (typeof cause?.code === 'string') return cause.code;
  return error instanceof Error ? error.message : String(error);
}
