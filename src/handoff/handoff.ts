/**
 * What a receiver hands a verified, validated event to instead of running its handlers in the
 * request: a durable queue (`bullmqHandoff` from `jobhook/bullmq`, `pgBossHandoff`, `natsHandoff`,
 * or one of your own over SQS, ...). The receiver answers 2xx once `enqueue` resolves, and 503 when
 * it rejects or takes longer than the hand-off allows (the sender retries). A worker later takes
 * the job off the queue and gives it to `receiver.handleQueued(job)`, which runs the handlers:
 * `work()` starts one on this very queue.
 *
 * The contract an implementation keeps:
 *
 * - `enqueue` resolves only once the job is durably stored (a reply from the queue's store, not a
 *   buffer in this process): the sender forgets a delivery once it is answered 2xx.
 * - Jobs with one `key` are stored once: an event delivered twice, retried, or sent to two
 *   webhooks during a rotation carries one key, and `enqueue` of a key that is stored (or was,
 *   within the hand-off's retention) resolves without storing it again.
 * - The job is stored as plain JSON, as given: `handleQueued` validates its payload again.
 *
 * @typeParam Options - the options of its worker (`work`): each engine's `WorkOptions`
 * @typeParam Handle - what `work` resolves to: each engine's `WorkerHandle`
 */
export interface Handoff<
  Options extends WorkOptions = WorkOptions,
  Handle extends WorkerHandle = WorkerHandle,
> {
  /** Stores `job` durably (once per `key`); rejects when it could not. */
  enqueue(job: HandoffJob): Promise<void>;
  /**
   * Starts a worker in this process that gives each job this hand-off stores to
   * `runner.handleQueued` (the receiver), with the queue's retries; resolves once it is connected.
   * It consumes the hand-off's own queue (stream, schema) over the hand-off's own connection, so it
   * cannot listen on another; `options` are the worker's (how many jobs at once, ...), never where
   * the jobs are. Optional: a hand-off of your own without it needs a consumer of your own.
   */
  work?(runner: QueuedJobRunner, options?: Options): Promise<Handle>;
}

/** The options every hand-off's worker takes (`handoff.work(receiver, options)`); each engine adds its own. */
export interface WorkOptions {
  /** Jobs the worker runs at once. Default 8. */
  concurrency?: number;
  /**
   * Receives the worker's own errors (a lost connection, an outcome it could not store), not the
   * handlers' failures, which go to the receiver's `onError`. Default: `console.error`.
   */
  onWorkerError?: (error: Error) => void;
}

/** A running worker: what `handoff.work()` resolves to. */
export interface WorkerHandle {
  /** Stops taking jobs and resolves once the jobs it runs have finished. */
  close(): Promise<void>;
}

/** One verified event on its way to a worker: plain JSON, so any queue can carry it. */
export interface HandoffJob {
  /**
   * The dedupe key: the event's `id` (or what the receiver's `dedupeKey` picks), the same for
   * every copy and retry of the event. `undefined` only when the delivery had no id at all.
   */
  key: string | undefined;
  /** The event type, e.g. `job.completed`. */
  type: string;
  /** The sender's delivery id (`webhook-id`), as handlers see it in `context.deliveryId`. */
  deliveryId: string | undefined;
  /**
   * The verified body decoded as JSON, before schema validation: the worker validates it with
   * its receiver's schemas, so that a schema's transforms run where the handlers run.
   */
  payload: unknown;
  /** When the receiver accepted the delivery, in ms since the epoch. */
  receivedAt: number;
  /** `'poll'` for an outcome the receiver found by polling the gateway; absent for a webhook. */
  source?: 'webhook' | 'poll';
  /** The tenant whose secret verified the delivery, for a receiver with a `secret` function. */
  tenant?: string;
}

/**
 * The worker side of a hand-off: what `handoff.work()` (or your own consumer) needs of a receiver.
 * `Receiver` has it.
 */
export interface QueuedJobRunner {
  /**
   * Runs the handlers for one job a hand-off stored; resolves once they all succeeded, rejects
   * (with the `JobhookError` also given to `onError`) when one failed or timed out, so that the
   * queue retries the job.
   */
  handleQueued(job: HandoffJob, attempt?: QueuedAttempt): Promise<void>;
}

/** What a queue worker says about the attempt it gives to `receiver.handleQueued`. */
export interface QueuedAttempt {
  /**
   * 1 for the job's first attempt, counting on for the queue's retries and when a failed event
   * is retried by hand; handlers see it as `context.attempt`. On the first, the receiver's
   * observer learns the time from hand-off to start (`jobhook.handoff.latency`).
   */
  attempt?: number;
}
