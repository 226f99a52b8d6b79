import { messageOf, safeLogger, type Logger, type Redact } from '../common/logging.js';
import type { JobTracker } from '../tracker/job-tracker.js';
import type { GenerateImageResult } from './types.js';

/**
 * Records each submitted task in the client's `jobs` tracker, so a reconciler polls it if its
 * webhook never comes. The submission has happened (credits spent): a tracker that fails never
 * fails it; it is logged at warn, naming the task so it can be tracked by hand (the tracker's
 * error may quote anything: the line goes through the client's redaction of its key).
 */
export function submissionTracker(
  jobs: JobTracker | undefined,
  logger: Logger | undefined,
  redact: Redact,
  tenant: string | undefined,
) {
  const log = safeLogger(
    logger ?? { error: (message) => console.error(message), warn: (message) => console.warn(message) },
  );
  return async function track(submitted: GenerateImageResult): Promise<GenerateImageResult> {
    if (!jobs || typeof submitted?.task_id !== 'string') return submitted;
    try {
      await (tenant === undefined
        ? jobs.track(submitted.task_id)
        : jobs.track(submitted.task_id, undefined, tenant));
    } catch (error) {
      log.warn(
        redact(
          `jobhook: task ${JSON.stringify(submitted.task_id)} was submitted but the job tracker could not ` +
            `record it (${messageOf(error)}); it will not be polled unless tracked again with jobs.track().`,
        ),
      );
    }
    return submitted;
  };
}
