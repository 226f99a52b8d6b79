import { JobhookError } from '../common/errors.js';
import { messageOf } from '../common/logger.js';
import { answers, type ReceiverResponse } from '../wire/answers.js';
import type { Handoff, HandoffJob } from './handoff.js';

/**
 * The receiving side of a hand-off: stores the verified event and answers 200 once it is stored,
 * or 503 `handoff_failed` (the sender retries) when the hand-off rejects; the failure goes to
 * `onError` (or the log) as a `handoff_failed` JobhookError.
 */
export async function handOff(
  handoff: Handoff,
  job: HandoffJob,
  report: (
    failures: readonly JobhookError[],
    delivery: { deliveryId: string | undefined; type: string },
  ) => void,
): Promise<ReceiverResponse> {
  try {
    await handoff.enqueue(job);
    return answers.ok();
  } catch (error) {
    const failure =
      error instanceof JobhookError && error.code === 'handoff_failed'
        ? error
        : new JobhookError('handoff_failed', `The event could not be queued: ${messageOf(error)}`, {
            cause: error,
          });
    report([failure], { deliveryId: job.deliveryId, type: job.type });
    return answers.handoffFailed();
  }
}
