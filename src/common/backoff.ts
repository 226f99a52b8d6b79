/** How long to wait between tries: every retry loop of jobhook takes its delays from this, through `backoffDelay`. */
export interface Backoff {
  /** The wait before the first retry, in ms. */
  firstMs: number;
  /** The longest wait, in ms. */
  maxMs: number;
  /** How much each retry's wait grows over the one before. Default 2. */
  factor?: number;
  /** `'full'`: a random wait up to the delay; a fraction `f`: the delay times 1 ± f; 0 (default): none. */
  jitter?: 'full' | number;
}

/** The wait before retry number `retry` (1 for the first), in whole ms. */
export function backoffDelay(backoff: Backoff, retry: number, random: () => number = Math.random): number {
  const { firstMs, maxMs, factor = 2, jitter = 0 } = backoff;
  // The exponent is bounded so that a long-running loop never computes Infinity * 0.
  const exponent = Math.min(Math.max(0, retry - 1), 64);
  const delay = Math.min(maxMs, firstMs * factor ** exponent);
  if (jitter === 'full') return Math.round(random() * delay);
  if (jitter > 0) return Math.round(Math.min(maxMs, delay * (1 - jitter + 2 * jitter * random())));
  return Math.round(delay);
}

/** Resolves after `ms`, or rejects with the signal's reason as soon as it aborts. */
export function sleep(ms: number, signal?: AbortSignal, keepAlive = true): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason as Error);
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    // A wait that must not keep the process alive (a look in the background) lets it exit.
    if (!keepAlive) (timer as { unref?: () => void }).unref?.();
    function onAbort() {
      clearTimeout(timer);
      reject(signal!.reason as Error);
    }
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}
