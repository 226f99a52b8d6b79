import { JobhookError } from '../common/errors.js';
import { checkOption, func } from '../common/option-checks.js';
import { messageOf, quote } from '../common/logging.js';
import type { QueuedJobRunner } from './handoff.js';

/** A worker's first argument, checked: the receiver whose handlers it runs. */
export function checkReceiver(where: string, receiver: QueuedJobRunner | undefined): void {
  const valid = typeof receiver?.handleQueued === 'function';
  checkOption(
    where,
    'receiver',
    receiver,
    valid,
    'the receiver whose handlers should run (from createReceiver)',
  );
}

/** A worker's `onWorkerError`, resolved: `console.error` by default, guarded so a throw never stops the worker. */
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
      // Nowhere left to report it.
    }
  };
}

const ONE_WAY = 'start the worker with receiver.work() (handoff.work(receiver))';

/** The error for a worker's queue (stream, schema) other than its hand-off's: it would never see its events. */
export function differentFromHandoff(
  where: string,
  option: string,
  given: string,
  what: string,
  handoffs: string,
  verb = 'is',
): JobhookError {
  return new JobhookError(
    'invalid_options',
    `${where}: \`${option}\` ${verb} ${quote(given)}, but the hand-off's ${what} is ${quote(handoffs)}, so the worker would never see its events; leave \`${option}\` out, or ${ONE_WAY}.`,
  );
}

/** The error for a worker given no hand-off whose queue is not there: it would listen on nothing, silently. */
export function noQueue(where: string, what: string, name: string, why: string): JobhookError {
  return new JobhookError(
    'invalid_options',
    `${where}: there is no ${what} ${quote(name)}${why}; pass the hand-off (\`handoff\`) or the name, or ${ONE_WAY}.`,
  );
}
