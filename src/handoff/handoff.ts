import { positiveInteger } from '../common/option-checks.js';

/**
 * A durable queue a receiver hands verified events to: `enqueue` resolves once the job is durably
 * stored, once per `key`; a worker gives each job to `receiver.handleQueued` (docs/handoff.md).
 * @typeParam Options - the options of its worker (`work`): each engine's `WorkOptions`
 * @typeParam Handle - what `work` resolves to: each engine's `WorkerHandle`
 */
export interface Handoff<
  Options extends WorkOptions = WorkOptions,
  Handle extends WorkerHandle = WorkerHandle,
> {
  /** Stores `job` durably (once per `key`); rejects when it could not. */
  enqueue(job: HandoffJob): Promise<void>;
  /** Starts a worker on this hand-off's own queue that gives each job to `runner.handleQueued`; optional. */
  work?(runner: QueuedJobRunner, options?: Options): Promise<Handle>;
}

/** The options every hand-off's worker takes (`handoff.work(receiver, options)`); each engine adds its own. */
export interface WorkOptions {
  /** Jobs the worker runs at once. Default 8. */
  concurrency?: number;
  /** The worker's own errors (a lost connection), not the handlers' (`onError`). Default: `console.error`. */
  onWorkerError?: (error: Error) => void;
}

/** A running worker: what `handoff.work()` resolves to. */
export interface WorkerHandle {
  /** Stops taking jobs and resolves once the jobs it runs have finished. */
  close(): Promise<void>;
}

/** One verified event on its way to a worker: plain JSON, so any queue can carry it. */
export interface HandoffJob {
  /** The dedupe key, the same for every copy of the event; `undefined` only when the delivery had no id. */
  key: string | undefined;
  /** The event type, e.g. `job.completed`. */
  type: string;
  /** The sender's delivery id (`webhook-id`), as handlers see it in `context.deliveryId`. */
  deliveryId: string | undefined;
  /** The verified body decoded as JSON, validated again by the worker (transforms run where handlers run). */
  payload: unknown;
  /** When the receiver accepted the delivery, in ms since the epoch. */
  receivedAt: number;
  /** `'poll'` for an outcome the receiver found by polling the gateway; absent for a webhook. */
  source?: 'webhook' | 'poll';
  /** The tenant whose secret verified the delivery, for a receiver with a `secret` function. */
  tenant?: string;
  /** `true` when the payload is the gateway's own answer (confirm mode): `context.confirmed`. */
  confirmed?: boolean;
}

/** What a hand-off's worker (or your own consumer) needs of a receiver. */
export interface QueuedJobRunner {
  /** Runs the handlers for one stored job; rejects when one failed or timed out, so the queue retries it. */
  handleQueued(job: HandoffJob, attempt?: QueuedAttempt): Promise<void>;
}

/** What a queue worker says about the attempt it gives to `receiver.handleQueued`. */
export interface QueuedAttempt {
  /** 1 for the job's first attempt, counting on for retries (`context.attempt`). */
  attempt?: number;
}

/** Events whose handlers kept failing, kept with their error, listed and retried alike on every engine. */
export interface FailedEvents {
  /** The events kept as failed, oldest first, at most `limit` (default 100). */
  listFailed(options?: { limit?: number }): Promise<FailedEvent[]>;
  /** Queues the failed event `id` again; `false` when there is none (retried already), so twice runs once. */
  retryFailed(id: string): Promise<boolean>;
}

/** One event kept as failed. */
export interface FailedEvent {
  /** The engine's id for it: what `retryFailed` takes. */
  id: string;
  /** The event's dedupe key (its `id`), as the receiver queued it. */
  key: string | undefined;
  type: string;
  /** The sender's delivery id of the copy that was queued. */
  deliveryId: string | undefined;
  /** The event as queued (the verified body decoded as JSON). */
  payload: unknown;
  error: string;
  attempts: number;
  /** When it failed for good, in ms since the epoch, when the engine records it. */
  failedAt: number | undefined;
}

/** The `limit` of `listFailed`, checked. */
export function failedLimit(options: { limit?: number } | undefined, where = 'listFailed'): number {
  return positiveInteger(where, 'limit', options?.limit, 100);
}

/** Where a receiver keeps the hand-off it was made with: a global symbol, the same in every bundle of jobhook. */
const OWN_HANDOFF = Symbol.for('jobhook.receiver.handoff');

export function keepOwnHandoff(receiver: object, handoff: Handoff | undefined): void {
  Object.defineProperty(receiver, OWN_HANDOFF, { value: handoff });
}

/** The hand-off `runner` was made with, when it is a receiver that has one. */
export function ownHandoffOf(runner: QueuedJobRunner): Handoff | undefined {
  const own = (runner as { [OWN_HANDOFF]?: unknown } | null)?.[OWN_HANDOFF];
  return typeof own === 'object' && own !== null ? (own as Handoff) : undefined;
}
