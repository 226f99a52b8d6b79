import { checkOption } from '../common/errors.js';
import type { QueuedJobRunner } from './handoff.js';

/** A worker's first argument, checked: every worker runs the handlers of a receiver it is given. */
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
