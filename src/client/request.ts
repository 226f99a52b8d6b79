import { GatewayError, GatewayNetworkError, GatewayTimeoutError } from './errors.js';
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

export interface TransportConfig {
  apiKey: string;
  baseUrl: string;
  fetch: typeof fetch;
  timeoutMs: number;
  retry: ResolvedRetry;
}

export type Transport = <T>(
  method: string,
  path: string,
  body?: unknown,
  options?: RequestOptions,
) => Promise<T>;

/** One gateway call: envelope in, `data` or a GatewayError out, with time-outs and retries. */
export function createTransport(config: TransportConfig): Transport {
  return async function request<T>(
    method: string,
    path: string,
    body?: unknown,
    options: RequestOptions = {},
  ) {
    const retry = options.retries === undefined ? config.retry : resolveRetry(options.retries);
    const call = () => once(config, method, path, body, options) as Promise<T>;
    return retry.methods.includes(method) ? withRetries(call, retry, options.signal) : call();
  };
}

async function once(
  config: TransportConfig,
  method: string,
  path: string,
  body: unknown,
  options: RequestOptions,
) {
  const timeoutMs = options.timeoutMs ?? config.timeoutMs;
  const timer = new AbortController();
  const timeout = setTimeout(() => timer.abort(), timeoutMs);
  const signal = options.signal ? AbortSignal.any([options.signal, timer.signal]) : timer.signal;
  const headers: Record<string, string> = {
    authorization: `Bearer ${config.apiKey}`,
    accept: 'application/json',
  };
  if (body !== undefined) headers['content-type'] = 'application/json';
  const what = `${method} ${path}`;
  try {
    let response: Response;
    let text: string;
    try {
      response = await config.fetch(config.baseUrl + path, {
        method,
        headers,
        body: body === undefined ? undefined : JSON.stringify(body),
        signal,
      });
      text = await response.text();
    } catch (error) {
      // The caller's own abort is not a gateway failure: it surfaces as the caller's reason.
      if (options.signal?.aborted) throw options.signal.reason;
      if (timer.signal.aborted)
        throw new GatewayTimeoutError(`${what}: no answer from the gateway within ${timeoutMs} ms.`);
      throw new GatewayNetworkError(`${what}: could not reach the gateway (${describe(error)}).`, error);
    }
    return unwrap(response, text, what, config.apiKey);
  } finally {
    clearTimeout(timeout);
  }
}

/** The envelope's `data`, or a GatewayError built from its `error` and `request_id`. */
function unwrap(response: Response, text: string, what: string, apiKey: string): unknown {
  let envelope: unknown;
  try {
    envelope = text.length > 0 ? JSON.parse(text) : undefined;
  } catch {
    envelope = undefined;
  }
  const record = isRecord(envelope) ? envelope : {};
  const requestId =
    typeof record.request_id === 'string'
      ? record.request_id
      : (response.headers.get('x-request-id') ?? undefined);
  if (response.ok && record.success === true) return record.data;
  const error = isRecord(record.error) ? record.error : {};
  const code =
    typeof error.code === 'string'
      ? error.code
      : response.ok
        ? 'invalid_response'
        : `http_${response.status}`;
  const detail =
    typeof error.message === 'string'
      ? error.message
      : response.ok
        ? 'the answer is not the gateway envelope'
        : `HTTP ${response.status}`;
  throw new GatewayError(redact(`${what} failed (${response.status} ${code}): ${detail}`, apiKey), {
    status: response.status,
    code,
    requestId,
    retryAfterSeconds: parseRetryAfter(response.headers.get('retry-after')),
  });
}

/** The gateway's text is echoed into messages; make sure the key can never ride along. */
function redact(message: string, apiKey: string): string {
  return apiKey.length > 0 ? message.split(apiKey).join('[redacted]') : message;
}

function describe(error: unknown): string {
  const cause = (error as { cause?: { code?: unknown } } | undefined)?.cause;
  if (typeof cause?.code === 'string') return cause.code;
  return error instanceof Error ? error.message : String(error);
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
