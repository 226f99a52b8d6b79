import { JobhookError } from '../common/errors.js';
import { messageOf } from '../common/logger.js';

/**
 * Rejects with a `dedupe_store_failed` JobhookError when `operation` takes longer than `timeoutMs`
 * (0: no limit). A shared store that stops answering must fail the delivery (500, the sender
 * retries) rather than hold it open: a client library may queue commands while it reconnects.
 */
export function withTimeout<T>(operation: Promise<T>, timeoutMs: number, what: string): Promise<T> {
  const failed = (cause: unknown) =>
    new JobhookError('dedupe_store_failed', `The dedupe store failed to ${what}: ${messageOf(cause)}`, {
      cause,
    });
  if (timeoutMs <= 0) return operation.catch((error: unknown) => Promise.reject(failed(error)));
  return new Promise<T>((resolve, reject) => {
    const timer = setTimeout(() => reject(failed(new Error(`no answer within ${timeoutMs} ms`))), timeoutMs);
    operation.then(
      (value) => {
        clearTimeout(timer);
        resolve(value);
      },
      (error: unknown) => {
        clearTimeout(timer);
        reject(failed(error));
      },
    );
  });
}
