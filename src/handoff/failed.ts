import { positiveInteger } from '../common/errors.js';

/**
 * Events whose handlers kept failing: a hand-off keeps each one, with its error, after the job's
 * last attempt, and lists and retries them the same way on every engine (`jobhook failed list`,
 * `jobhook failed retry <id|--all>` on the command line).
 */
export interface FailedEvents {
  /** The events kept as failed, oldest first, at most `limit` (default 100). */
  listFailed(options?: { limit?: number }): Promise<FailedEvent[]>;
  /**
   * Queues the failed event `id` (a {@link FailedEvent}'s `id`) again: its handlers run once more,
   * with `context.attempt` counting on. Resolves `false` when no failed event has that id (it was
   * retried already, or never failed), so retrying twice runs the handlers once.
   */
  retryFailed(id: string): Promise<boolean>;
}

/** One event kept as failed. */
export interface FailedEvent {
  /** The engine's id for it: what `retryFailed` takes. */
  id: string;
  /** The event's dedupe key (its `id`), as the receiver queued it. */
  key: string | undefined;
  /** The event type, e.g. `job.completed`. */
  type: string;
  /** The sender's delivery id of the copy that was queued. */
  deliveryId: string | undefined;
  /** The event as queued (the verified body decoded as JSON). */
  payload: unknown;
  /** The last attempt's error message. */
  error: string;
  /** Attempts made so far. */
  attempts: number;
  /** When it failed for good, in ms since the epoch, when the engine records it. */
  failedAt: number | undefined;
}

/** The `limit` of `listFailed`, checked. */
export function failedLimit(options: { limit?: number } | undefined, where = 'listFailed'): number {
  return positiveInteger(where, 'limit', options?.limit, 100);
}
