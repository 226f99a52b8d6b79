import { isRecord } from '../common/errors.js';
import { messageOf, quote, type SafeLogger } from '../common/logging.js';
import type { DeliveryFailures } from './observer.js';
import type { ReconcileClient } from './options.js';
import { rateLimitOf } from './rate-limit.js';

/** The counters of the webhook as last read. */
interface Reading {
  webhookId: unknown;
  totalFailed: number;
  at: number;
}

/**
 * Reads this receiver's webhook counters (`GET /api/v1/webhooks`) at most once per `intervalMs`
 * and, each time `total_failed` grew, warns once and tells the observer: the gateway's own count
 * of deliveries it could not make, which polling recovers but nobody would otherwise notice. The
 * first reading is the baseline: failures from before the receiver started are not news.
 */
export function deliveryFailureWatch(config: {
  client: ReconcileClient;
  url: () => string | undefined;
  intervalMs: number;
  now: () => number;
  logger: SafeLogger;
  report: (failures: DeliveryFailures) => void;
  /** The gateway answered 429 (with its Retry-After in ms, if any). */
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
    // A client of your own may resolve with anything: only webhook records are read.
    const list: readonly unknown[] = Array.isArray(webhooks) ? webhooks : [];
    warnedFailure = false;
    const own = list.find(
      (webhook): webhook is Record<string, unknown> =>
        isRecord(webhook) && normalized(webhook.url) === normalized(url),
    );
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

/** `https://A.example/x` and `https://a.example/x` are one webhook, as the gateway compares them. */
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
