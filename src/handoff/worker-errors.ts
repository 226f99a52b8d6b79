import { messageOf } from '../common/logging.js';
import { func } from '../common/errors.js';

/**
 * A worker's `onWorkerError` option, resolved: checked to be a function, `console.error` of the
 * (redacted) message by default, and guarded, since a reporter that throws must not stop the
 * worker. Every hand-off's worker reports its own errors (a lost connection, an outcome not stored)
 * through it.
 */
export function workerErrorReporter(
  where: string,
  option: ((error: Error) => void) | undefined,
): (error: unknown) => void {
  const report =
    func(where, 'onWorkerError', option) ??
    ((error: Error) => console.error(`jobhook: worker: ${messageOf(error)}`));
  return (error) => {
    try {
      report(error instanceof Error ? error : new Error(String(error)));
    } catch {
      // A reporter that throws must not stop the worker.
    }
  };
}
