/** What {@link within} gives when the work did not settle in time. */
export const TIMED_OUT: unique symbol = Symbol('timed out');

/**
 * The one bounded wait: resolves like `work`, or with {@link TIMED_OUT} once `timeoutMs` passed
 * first (0, a negative or a non-finite bound: no bound); rejects when `work` rejects in time. The
 * work itself goes on; the timer is cleared as soon as it settles. `unref`: the wait alone does
 * not keep the process alive (for waits inside a delivery, which its connection holds open).
 */
export function within<T>(
  work: PromiseLike<T>,
  timeoutMs: number,
  options: { unref?: boolean } = {},
): Promise<T | typeof TIMED_OUT> {
  if (!(timeoutMs > 0 && Number.isFinite(timeoutMs))) return Promise.resolve(work);
  return new Promise((resolve, reject) => {
    const timer = setTimeout(resolve, timeoutMs, TIMED_OUT);
    if (options.unref) (timer as { unref?: () => void }).unref?.();
    work.then(
      (value) => {
        clearTimeout(timer);
        resolve(value);
      },
      (error: unknown) => {
        clearTimeout(timer);
        // eslint-disable-next-line @typescript-eslint/prefer-promise-reject-errors -- passed on as it came
        reject(error);
      },
    );
  });
}

/**
 * Settles like `operation`, but rejects with `fail(cause)` when it rejects or takes longer than
 * `timeoutMs` (0: no limit). A shared service that stops answering must fail the delivery (the
 * sender retries) rather than hold it open: a client library may queue commands while it
 * reconnects. The operation itself goes on; whatever it does later is the caller's to tolerate.
 */
export function bounded<T>(
  operation: Promise<T>,
  timeoutMs: number,
  fail: (cause: unknown) => Error,
): Promise<T> {
  return within(operation, timeoutMs).then(
    (value) =>
      value === TIMED_OUT ? Promise.reject(fail(new Error(`no answer within ${timeoutMs} ms`))) : value,
    (error: unknown) => Promise.reject(fail(error)),
  );
}
