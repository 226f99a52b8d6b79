import { bounded } from '../common/bounded.js';
import { JobhookError } from '../common/errors.js';
import { messageOf } from '../common/logger.js';

/**
 * Rejects with a `dedupe_store_failed` JobhookError when `operation` fails or takes longer than
 * `timeoutMs` (0: no limit); see {@link bounded}.
 */
export function withTimeout<T>(operation: Promise<T>, timeoutMs: number, what: string): Promise<T> {
  return bounded(
    operation,
    timeoutMs,
    (cause) =>
      new JobhookError('dedupe_store_failed', `The dedupe store failed to ${what}: ${messageOf(cause)}`, {
        cause,
      }),
  );
}
