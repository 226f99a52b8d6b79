import type { SafeLogger } from '../common/logging.js';
import { webhookAt } from '../reconcile/gateway.js';

/** The default wait before the first look at a registered webhook's counters; each later look waits twice as long. */
export const MOUNT_CHECK_AFTER_MS = 30_000;
const LOOKS = 5;
const READ_TIMEOUT_MS = 10_000;

/**
 * After `register()`, a few looks at the webhook's counters: a `last_error` of `HTTP 404` or `405`
 * means the gateway reaches the app but not the receiver, which would otherwise never hear of it.
 */
export function mountCheck(logger: SafeLogger) {
  const timers = new Set<ReturnType<typeof setTimeout>>();
  let stopped = false;

  async function failuresAt(client: unknown, url: string) {
    const webhooks = (client as { webhooks?: { list?: unknown } } | null)?.webhooks;
    const list = webhooks?.list as ((options: object) => unknown) | undefined;
    if (typeof list !== 'function') return undefined;
    try {
      const answer: unknown = await list.call(webhooks, { retries: 0, timeoutMs: READ_TIMEOUT_MS });
      const own = webhookAt(Array.isArray(answer) ? answer : [], url);
      const failed = own?.total_failed;
      return typeof failed === 'number' ? { failed, lastError: own!.last_error } : undefined;
    } catch {
      return undefined;
    }
  }

  return {
    /** Starts the looks at `url`'s webhook (timers that keep no process alive), the first after `afterMs`. */
    async start(client: unknown, url: string, afterMs: number): Promise<void> {
      if (stopped) return;
      const baseline = (await failuresAt(client, url))?.failed ?? 0;
      const look = (n: number) => {
        if (stopped || n >= LOOKS) return;
        const timer = setTimeout(
          async () => {
            timers.delete(timer);
            const now = await failuresAt(client, url);
            const status = typeof now?.lastError === 'string' && /^HTTP (404|405)\b/.exec(now.lastError)?.[1];
            if (stopped) return;
            if (now && status && now.failed > baseline) return logger.error(wrongPathLine(url, status));
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
