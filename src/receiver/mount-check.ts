import type { SafeLogger } from '../common/logging.js';
import { webhookCounters } from '../reconcile/gateway.js';

/** The default wait before the first look at a registered webhook's counters; each later look waits twice as long. */
export const MOUNT_CHECK_AFTER_MS = 30_000;
const LOOKS = 5;

/**
 * After `register()`, a few looks at the webhook's counters: a `last_error` of `HTTP 404` or `405`
 * means the gateway reaches the app but not the receiver, which would otherwise never hear of it.
 */
export function mountCheck(logger: SafeLogger) {
  const timers = new Set<ReturnType<typeof setTimeout>>();
  let stopped = false;

  return {
    /** Starts the looks at `url`'s webhook (timers that keep no process alive), the first after `afterMs`. */
    async start(client: unknown, url: string, afterMs: number): Promise<void> {
      if (stopped) return;
      const baseline = (await webhookCounters(client, url))?.totalFailed ?? 0;
      const look = (n: number) => {
        if (stopped || n >= LOOKS) return;
        const timer = setTimeout(
          async () => {
            timers.delete(timer);
            const now = await webhookCounters(client, url);
            const status = typeof now?.lastError === 'string' && /^HTTP (404|405)\b/.exec(now.lastError)?.[1];
            if (stopped) return;
            if (now && status && now.totalFailed > baseline) return logger.error(wrongPathLine(url, status));
            look(n + 1);
          },
          afterMs * 2 ** n,
        );
        (timer as { unref?: () => void }).unref?.();
        timers.add(timer);
      };
      look(0);
    },
    stop(): void {
      stopped = true;
      for (const timer of timers) clearTimeout(timer);
      timers.clear();
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
