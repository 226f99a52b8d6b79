/**
 * A signal aborted as soon as either one is, with that one's reason: `AbortSignal.any`, or the
 * same by hand where the runtime lacks it (Vercel's Edge Runtime does). The listener added by
 * hand is removed by `dispose`, so a long-lived caller's signal does not collect one per call.
 */
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
