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
  if (timeoutMs <= 0) return operation.catch((error: unknown) => Promise.reject(fail(error)));
  return new Promise<T>((resolve, reject) => {
    const timer = setTimeout(() => reject(fail(new Error(`no answer within ${timeoutMs} ms`))), timeoutMs);
    operation.then(
      (value) => {
        clearTimeout(timer);
        resolve(value);
      },
      (error: unknown) => {
        clearTimeout(timer);
        reject(fail(error));
      },
    );
  });
}
