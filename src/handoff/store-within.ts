import { bounded } from '../common/bounded.js';
import { JobhookError } from '../common/errors.js';
import { messageOf } from '../common/logger.js';

/**
 * A hand-off's store of one job, bounded: rejects with a `handoff_failed` JobhookError when the
 * broker fails or does not confirm within `timeoutMs` (0: no limit), so that the delivery answers
 * 503 and the sender retries. A store confirmed late is then found by the job's key.
 */
export function storeWithin<T>(store: Promise<T>, timeoutMs: number): Promise<T> {
  return bounded(
    store,
    timeoutMs,
    (cause) =>
      new JobhookError('handoff_failed', `The event could not be queued: ${messageOf(cause)}`, { cause }),
  );
}
