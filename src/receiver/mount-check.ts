import type { SafeLogger } from '../common/logging.js';
import { backoffDelay, sleep } from '../common/backoff.js';
import { webhookCounters } from '../reconcile/gateway.js';

/** The default wait before the first look at a registered webhook's counters; each later look waits twice as long. */
export const MOUNT_CHECK_AFTER_MS = 30_000;
const LOOKS = 5;

/**
 * After `register()`, a few looks at the webhook's counters: a `last_error` of `HTTP 404` or `405`
 * means the gateway reaches the app but not the receiver, which would otherwise never hear of it.
 */
export function mountCheck(logger: SafeLogger) {
  // Made on the first look: a Worker's global scope (where a receiver is often made) allows no timers.
  let stopping: AbortController | undefined;
  let stopped = false;
  return {
    /** Starts the looks at `url`'s webhook (waits that keep no process alive), the first after `afterMs`. */
    async start(client: unknown, url: string, afterMs: number): Promise<void> {
      if (stopped) return;
      stopping ??= new AbortController();
      const baseline = (await webhookCounters(client, url))?.totalFailed ?? 0;
      const backoff = { firstMs: afterMs, maxMs: Number.MAX_SAFE_INTEGER };
      for (let look = 1; look <= LOOKS; look++) {
        try {
          await sleep(backoffDelay(backoff, look), stopping.signal, false);
        } catch {
          return; // stopped by close()
        }
        const now = await webhookCounters(client, url);
        if (stopped) return;
        const status = typeof now?.lastError === 'string' && /^HTTP (404|405)\b/.exec(now.lastError)?.[1];
        if (now && status && now.totalFailed > baseline) return logger.error(wrongPathLine(url, status));
      }
    },
    stop(): void {
      stopped = true;
      stopping?.abort();
    },
  };
}

function wrongPathLine(url: string, status: string): string {
  let path = '(the registered path)';
  try {
    path = new URL(url).pathname;
  } catch {
    // An unparsable URL was refused at registration; the line still names the fix.
  }
  return (
    `jobhook: the gateway's deliveries to ${path} get HTTP ${status} from this app: they reach the app but not ` +
    `the receiver. Mount the receiver at ${path}, or register the path it is mounted at.`
  );
}
