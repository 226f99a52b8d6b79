import { isRecord } from '../common/values.js';
import { messageOf, quote, type SafeLogger } from '../common/logging.js';
import type { DeliveryFailures, ReconcileClient } from './options.js';

// What the reconciler reads of the gateway besides task statuses: its 429s and the webhook's counters.

/** The longest the reconciler stops for a 429, whatever Retry-After says (a year, say). */
export const MAX_RATE_LIMIT_PAUSE_MS = 5 * 60 * 1000;

/** A 429 from the gateway, with its Retry-After in ms (capped) when it gave one; `undefined` otherwise. */
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

interface Reading {
  webhookId: unknown;
  totalFailed: number;
  at: number;
}

/** Warns (and tells the observer) each time the webhook's `total_failed` grew, read at most once per interval. */
export function deliveryFailureWatch(config: {
  client: ReconcileClient;
  url: () => string | undefined;
  intervalMs: number;
  now: () => number;
  logger: SafeLogger;
  report: (failures: DeliveryFailures) => void;
  rateLimited: (retryAfterMs: number | undefined) => void;
}) {
  let last: Reading | undefined;
  let lastReadAt = -Infinity;
  let warnedFailure = false;

  async function check(signal: AbortSignal): Promise<void> {
    const url = config.url();
    const webhooksApi = config.client.webhooks;
    const at = config.now();
    if (url === undefined || typeof webhooksApi?.list !== 'function' || at - lastReadAt < config.intervalMs) {
      return;
    }
    lastReadAt = at;
    let webhooks;
    try {
      webhooks = await webhooksApi.list({ signal, retries: 0 });
    } catch (error) {
      const limited = rateLimitOf(error);
      if (limited) return config.rateLimited(limited.retryAfterMs);
      if (!warnedFailure && !signal.aborted) {
        warnedFailure = true;
        config.logger.warn(`jobhook: could not read the webhook's delivery counters: ${messageOf(error)}`);
      }
      return;
    }
    const list: readonly unknown[] = Array.isArray(webhooks) ? webhooks : [];
    warnedFailure = false;
    const own = webhookAt(list, url);
    const totalFailed = own?.total_failed;
    if (!own || typeof totalFailed !== 'number') return;
    const before = last;
    last = { webhookId: own.id, totalFailed, at };
    // A new webhook (deleted and registered again) counts from zero: a new baseline.
    if (!before || before.webhookId !== own.id || totalFailed <= before.totalFailed) return;
    const failures: DeliveryFailures = {
      url: shown(url),
      failed: totalFailed - before.totalFailed,
      totalFailed,
      since: before.at,
      lastError: typeof own.last_error === 'string' ? own.last_error : undefined,
    };
    config.logger.warn(
      `jobhook: the gateway failed ${failures.failed} deliver${failures.failed === 1 ? 'y' : 'ies'} to ` +
        `${failures.url} since ${new Date(failures.since).toISOString()}; last error: ` +
        `${failures.lastError === undefined ? '(none given)' : quote(failures.lastError)}. ` +
        'Outcomes of tracked jobs are recovered by polling.',
    );
    config.report(failures);
  }

  return { check };
}

/** The webhook of `url` in a list the gateway gave, compared as the gateway compares URLs. */
export function webhookAt(list: readonly unknown[], url: string): Record<string, unknown> | undefined {
  return list.find(
    (webhook): webhook is Record<string, unknown> =>
      isRecord(webhook) && normalized(webhook.url) === normalized(url),
  );
}

/** The time a reading of a webhook's counters may take: a look that answers nothing is no reading. */
const COUNTERS_TIMEOUT_MS = 10_000;

/**
 * The counters of the webhook registered at `url`, read once through `client.webhooks.list` with no
 * retries; `undefined` when the client cannot list, the call fails, or the webhook has none.
 */
export async function webhookCounters(
  client: unknown,
  url: string,
): Promise<{ totalFailed: number; lastError: unknown } | undefined> {
  const webhooks = (client as { webhooks?: { list?: unknown } } | null)?.webhooks;
  const list = webhooks?.list as ((options: object) => unknown) | undefined;
  if (typeof list !== 'function') return undefined;
  try {
    const answer: unknown = await list.call(webhooks, { retries: 0, timeoutMs: COUNTERS_TIMEOUT_MS });
    const own = webhookAt(Array.isArray(answer) ? answer : [], url);
    const totalFailed = own?.total_failed;
    return typeof totalFailed === 'number' ? { totalFailed, lastError: own!.last_error } : undefined;
  } catch {
    return undefined;
  }
}

/** A URL as the gateway compares them (`https://A.example/x` is `https://a.example/x`). */
function normalized(url: unknown): string | undefined {
  if (typeof url !== 'string') return undefined;
  try {
    return new URL(url).href;
  } catch {
    return url;
  }
}

/** A URL as a log line may show it: no credentials, no query (a token may ride in either). */
function shown(url: string): string {
  try {
    const parsed = new URL(url);
    return `${parsed.protocol}//${parsed.host}${parsed.pathname}`;
  } catch {
    return '(the webhook URL)';
  }
}
