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
import type { ReplayOptions, ReplayReport } from './replay.js';

/** One delivery as it came off the wire. */
export interface DeliveryInput {
  /** Default `POST`. */
  method?: string | undefined;
  headers: HeadersInput;
  /** The raw body, or a reader called once the headers passed; anything else means a parser consumed it. */
  body: BodyInput | BodyReader | null | undefined;
  /** The request's absolute URL, for a `secret` function that picks secrets by path. */
  url?: string | undefined;
  /** The adapter's framework, so that a mounting mistake is logged with that framework's fix. */
  framework?: DeliveryFramework | undefined;
}

/** The frameworks jobhook's adapters serve (`DeliveryInput.framework`). */
export type DeliveryFramework = 'express' | 'fastify' | 'hono' | 'koa' | 'node';

/** Options of `receiver.close()`. */
export interface CloseOptions {
  /** Longest wait for running deliveries, late handlers and `onError` calls, in ms. Default 30,000; 0: no bound. */
  timeoutMs?: number;
}

/** The event maps receivers can have: the two job events always exist. */
export interface EventMap {
  'job.completed': unknown;
  'job.failed': unknown;
}

/** What `onAny` handlers receive: any typed event, or a verified event of a type with no schema. */
export type AnyEvent<E extends EventMap> = E[keyof E] | UnknownEvent;

/** Receives each handler, store or hand-off failure as a `JobhookError` (the original is its `cause`). */
export type ErrorHandler = (
  error: JobhookError,
  context: { deliveryId: string | undefined; type: string; tenant: string | undefined },
) => unknown;

/** What {@link createReceiver} returns: add handlers (calls chain), then mount it with an adapter, `fetch` or `receive`. */
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
  /** Answers new deliveries 503 and resolves once what runs has finished (or after `timeoutMs`). */
  close(options?: CloseOptions): Promise<void>;
  /**
   * With `inbox`: runs stored deliveries again (refused, failed or handled ones), each verified
   * again from its bytes with today's secrets, with no timestamp window, `context.source` `'replay'`;
   * an event handled already is a duplicate unless `force`. Resolves with what became of each.
   */
  replay(options?: ReplayOptions): Promise<ReplayReport>;
  /** With `reconcile`: one bounded pass over the overdue tracked tasks, for a cron. Passes never overlap. */
  reconcileOnce(): Promise<ReconcileResult>;
  /** Largest body accepted, in bytes; adapters enforce it while streaming. */
  readonly maxBodyBytes: number;
  /** Creates or reuses the webhook for `url` through `client`, with this receiver's secret; call it once listening. */
  register<C extends WebhookRegistrar>(
    options: ReceiverRegisterOptions<C>,
  ): ReturnType<C['webhooks']['register']>;
  /** The job results seen lately: `client.images.waitFor(taskId, { receiver })` is woken by them. */
  readonly results: JobResults;
  /**
   * Runs the handlers of one job the `handoff` queued, rejecting when one failed so the queue retries.
   * It checks no signature: pass it only jobs your own hand-off stored (`receiver.work()` does).
   */
  handleQueued(job: HandoffJob, attempt?: QueuedAttempt): Promise<void>;
  /** Starts a worker on this receiver's own `handoff` (its queue, never another); `options` such as `{ concurrency }`. */
  work(options?: WorkOptions & Record<string, unknown>): Promise<WorkerHandle>;
}
