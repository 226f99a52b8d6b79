import { ignore, messageOf } from '../common/logging.js';
import { deadline } from '../common/deadline.js';
import { isRecord } from '../common/errors.js';
import { optionNames, positiveNumber, refuseUnknownOptions } from '../common/option-checks.js';
import { redactCause, redactor, type Redact } from '../common/logging.js';
import { readBodyCapped } from '../wire/collect-stream.js';
import {
  GatewayError,
  GatewayNetworkError,
  GatewayRedirectError,
  GatewayResponseTooLargeError,
  GatewayTimeoutError,
  listingTooLarge,
} from './errors.js';
import {
  parseRetryAfter,
  resolveRetry,
  withRetries,
  type ResolvedRetry,
  type RetryOptions,
} from './retry.js';

/** Per-call options, accepted as the last argument of every client method. */
export interface RequestOptions {
  /** Aborts the call (and any wait between retries); the call rejects with the signal's reason. */
  signal?: AbortSignal;
  /** Overrides the client's `timeoutMs` for this call. */
  timeoutMs?: number;
  /** Overrides the client's `retries` for this call. */
  retries?: number | RetryOptions;
}

interface TransportConfig {
  apiKey: string;
  /** Applied to every message the transport builds. */
  redactKey: Redact;
  baseUrl: string;
  fetch: typeof fetch;
  timeoutMs: number;
  retry: ResolvedRetry;
  maxResponseBytes: number;
}

/** The bytes a listing's pages have read so far: they share one `maxResponseBytes` (pages.ts). */
interface ListingBudget {
  bytes: number;
}

type Transport = <T>(
  method: string,
  path: string,
  body?: unknown,
  options?: RequestOptions,
  budget?: ListingBudget,
) => Promise<T>;

const REQUEST_OPTIONS = optionNames<RequestOptions>()(['signal', 'timeoutMs', 'retries']);

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
  const timeout = deadline(timeoutMs, () => timer.abort());
  const either = options.signal ? eitherSignal(options.signal, timer.signal) : undefined;
  const signal = either ? either.signal : timer.signal;
  const headers: Record<string, string> = {
    authorization: `Bearer ${config.apiKey}`,
    accept: 'application/json',
  };
  if (body !== undefined) headers['content-type'] = 'application/json';
  const what = `${method} ${path}`;
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
      // What fetch threw may quote the headers: the cause is a redacted copy.
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
    timeout.cancel();
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
  return messageOf(error);
}

const REDIRECTS = new Set([301, 302, 303, 307, 308]);

/** Same-origin redirects followed before giving up, as a loop guard. */
const MAX_REDIRECTS = 5;

interface RefusedRedirect {
  status: number;
  reason: string;
}

/**
 * fetch that follows only redirects to the origin of `url`, the one the API key may reach; each hop
 * behaves as fetch's (a 303, or a 301/302 after a POST, continues as a GET without a body).
 */
async function fetchSameOrigin(
  fetchImpl: typeof fetch,
  url: string,
  init: RequestInit & { method: string; headers: Record<string, string> },
): Promise<{ response: Response } | { refused: RefusedRedirect }> {
  let current = new URL(url);
  let { method, body, headers } = init;
  for (let hop = 0; ; hop++) {
    const response = await fetchImpl(current.href, { ...init, method, body, headers, redirect: 'manual' });
    // Browsers and some runtimes hide a manual redirect's target: it cannot be checked, so not followed.
    if (response.type === 'opaqueredirect') {
      return refusedRedirect(response, 'redirected somewhere this runtime does not reveal');
    }
    const location = REDIRECTS.has(response.status) ? response.headers.get('location') : null;
    if (location === null) return { response };
    await response.body?.cancel().catch(ignore);
    let next: URL;
    try {
      next = new URL(location, current);
    } catch {
      return refusedRedirect(response, 'redirected to an address that is not a URL');
    }
    if (next.origin !== current.origin) {
      return refusedRedirect(response, `redirected to another origin (${next.origin})`);
    }
    if (hop >= MAX_REDIRECTS) {
      return refusedRedirect(response, `redirected more than ${MAX_REDIRECTS} times`);
    }
    if (
      (response.status === 303 && method !== 'HEAD') ||
      ([301, 302].includes(response.status) && method === 'POST')
    ) {
      method = 'GET';
      body = undefined;
      headers = Object.fromEntries(Object.entries(headers).filter(([name]) => name !== 'content-type'));
    }
    current = next;
  }
}

function refusedRedirect(response: Response, reason: string): { refused: RefusedRedirect } {
  return { refused: { status: response.status, reason } };
}

/** Aborts as soon as either does: `AbortSignal.any`, or by hand where a runtime lacks it (Edge Runtime). */
export function eitherSignal(a: AbortSignal, b: AbortSignal): { signal: AbortSignal; dispose(): void } {
  if (typeof AbortSignal.any === 'function')
    return { signal: AbortSignal.any([a, b]), dispose: () => undefined };
  const controller = new AbortController();
  const fromA = () => controller.abort(a.reason);
  const fromB = () => controller.abort(b.reason);
  if (a.aborted) fromA();
  else if (b.aborted) fromB();
  else {
    a.addEventListener('abort', fromA, { once: true });
    b.addEventListener('abort', fromB, { once: true });
  }
  return {
    signal: controller.signal,
    dispose() {
      a.removeEventListener('abort', fromA);
      b.removeEventListener('abort', fromB);
    },
  };
}
