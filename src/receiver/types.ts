import type { BodyInput, BodyReader } from '../wire/body.js';
import type { ReceiverResponse } from '../wire/answers.js';
import type { HeadersInput } from '../wire/headers.js';
import type { JobhookError } from '../common/errors.js';
import type { DefaultEvents, UnknownEvent } from '../events/schemas.js';
import type { JobResults } from '../results/job-results.js';
import type { HandoffJob, QueuedAttempt, WorkerHandle, WorkOptions } from '../handoff/handoff.js';
import type { EventHandler } from './run-handlers.js';
import type { ReconcileResult } from '../reconcile/options.js';
import type { ReceiverRegisterOptions, WebhookRegistrar } from './register.js';

// The public types of a receiver: what createReceiver returns and what its methods take.

/** One delivery as it came off the wire. */
export interface DeliveryInput {
  /** Default `POST`. */
  method?: string | undefined;
  headers: HeadersInput;
  /**
   * The raw body, or a reader that the receiver calls once the method and the signature headers
   * passed (adapters pass one, so that a refused request costs no body). `null`/`undefined` or a
   * parsed object means a body parser consumed it first.
   */
  body: BodyInput | BodyReader | null | undefined;
  /**
   * The request's absolute URL, for a `secret` function that picks secrets by path. The adapters
   * pass it; a direct `receive()` call may leave it out.
   */
  url?: string | undefined;
}

/** Options of `receiver.close()`. */
export interface CloseOptions {
  /**
   * Longest wait for deliveries in progress, handlers still running past their timeout and
   * `onError` calls, in ms. Past it `close()` resolves anyway and logs what still runs (those
   * deliveries keep their claims until the lease lapses, then a retry runs them). Default 30,000;
   * 0 waits without a bound.
   */
  timeoutMs?: number;
}

/** The event maps receivers can have: the two job events always exist. */
export interface EventMap {
  'job.completed': unknown;
  'job.failed': unknown;
}

/** What `onAny` handlers receive: any typed event, or a verified event of a type with no schema. */
export type AnyEvent<E extends EventMap> = E[keyof E] | UnknownEvent;

/**
 * Receives each handler failure or time-out, and each dedupe store failure, as a `JobhookError`
 * (the original error is its `cause`), with the delivery it belongs to. The answer never waits for
 * it; `close()` does, within its bound.
 */
export type ErrorHandler = (
  error: JobhookError,
  context: { deliveryId: string | undefined; type: string; tenant: string | undefined },
) => unknown;

/**
 * What {@link createReceiver} returns: add handlers, then mount it with an adapter, `fetch` or
 * `receive`. The handler methods return the receiver, so calls chain.
 */
export interface Receiver<E extends EventMap = DefaultEvents> {
  /** Runs for every verified, valid `job.completed` delivery. */
  onJobCompleted(handler: EventHandler<E['job.completed']>): Receiver<E>;
  /** Runs for every verified, valid `job.failed` delivery. */
  onJobFailed(handler: EventHandler<E['job.failed']>): Receiver<E>;
  /** Runs for every verified, valid delivery of `type`. */
  on<K extends keyof E & string>(type: K, handler: EventHandler<E[K]>): Receiver<E>;
  /** Runs for every verified delivery, including event types jobhook has no schema for. */
  onAny(handler: EventHandler<AnyEvent<E>>): Receiver<E>;
  /** Receives every handler failure and timeout. Without one, failures are logged. */
  onError(handler: ErrorHandler): Receiver<E>;
  /** Verifies, validates and dispatches one delivery. Never rejects for anything a sender sends. */
  receive(input: DeliveryInput): Promise<ReceiverResponse>;
  /** The Web-standard handler: Bun, Deno, Workers, Next.js route handlers. */
  fetch(request: Request): Promise<Response>;
  /**
   * Stops accepting deliveries (they answer 503) and resolves once running handlers (also those
   * past their timeout) and `onError` calls finish and the adapter has written their answers, or
   * after `timeoutMs` (default 30 s): the server can then be closed, or the process exit.
   */
  close(options?: CloseOptions): Promise<void>;
  /**
   * With `reconcile`: one bounded pass over the tracked tasks whose outcome is overdue (what the
   * timer runs every `intervalMs`), for a cron on a platform without long-lived timers. Resolves
   * with what it did: status polls made, outcomes handled, tasks still running, and whether the
   * gateway's rate limit paused it. Passes never overlap. Rejects (`invalid_options`) without
   * `reconcile`.
   */
  reconcileOnce(): Promise<ReconcileResult>;
  /** Largest body accepted, in bytes; adapters enforce it while streaming. */
  readonly maxBodyBytes: number;
  /**
   * Creates or reuses the gateway webhook for `url` through `client` (from `jobhook/client`), with
   * this receiver's first secret and the event types it handles. Call it after the server is
   * listening: deliveries may follow at once.
   */
  register<C extends WebhookRegistrar>(
    options: ReceiverRegisterOptions<C>,
  ): ReturnType<C['webhooks']['register']>;
  /**
   * The job results this receiver saw lately (and, with a `results` channel, those other
   * instances saw), recorded once a delivery is verified and valid. Pass the receiver to
   * `client.images.waitFor(taskId, { receiver })` or `generateAndWait` to be woken by them.
   */
  readonly results: JobResults;
  /**
   * The worker side of a `handoff`: runs the handlers for one job the hand-off queued (validating
   * its payload with this receiver's schemas first), with the handler time-out and `onError`, and
   * rejects when a handler failed or timed out, so that the queue retries the job. `runWorker`
   * from `jobhook/bullmq` calls it for you.
   *
   * In-process only: it checks no signature (the receiver that queued the job did), and nothing
   * from the network leads to it: adapters, `receive` and `fetch` verify every delivery and never
   * call it. Never pass it anything but jobs your own hand-off stored.
   */
  handleQueued(job: HandoffJob, attempt?: QueuedAttempt): Promise<void>;
  /**
   * Starts a worker for this receiver's own `handoff` (its queue, stream or schema: the worker
   * cannot listen anywhere else) and resolves once it is ready; close the handle to stop it.
   * `options` are the engine's worker options, such as `{ concurrency }` (see each hand-off).
   * Rejects (`invalid_options`) without a `handoff`.
   */
  work(options?: WorkOptions & Record<string, unknown>): Promise<WorkerHandle>;
}
