import { answers, type ReceiverResponse } from '../wire/answers.js';
import { rawBytes, type BodyInput } from '../wire/body.js';
import { JobhookError } from '../common/errors.js';
import {
  defaultSchemas,
  type DefaultEvents,
  type EventMapOf,
  type EventSchemas,
  type MergedSchemas,
  type UnknownEvent,
} from '../events/schemas.js';
import { createFetchHandler } from '../wire/fetch-handler.js';
import { runHandlers, type DeliveryContext, type EventHandler } from './run-handlers.js';
import { readHeaders, type HeadersInput } from '../wire/headers.js';
import { messageOf, quote } from '../common/logger.js';
import { inFlightTracker } from './in-flight.js';
import { resolveOptions, type ReceiverOptions, type ResolvedOptions } from './options.js';
import { parseEvent } from './parse-event.js';
import { isThenable } from '../common/thenable.js';
import { verifyDelivery } from './verify-delivery.js';
import { registerReceiver, type ReceiverRegisterOptions, type WebhookRegistrar } from './register.js';
import { jobResults, type JobResults } from '../results/job-results.js';

/** One delivery as it came off the wire. */
export interface DeliveryInput {
  /** Default `POST`. */
  method?: string | undefined;
  headers: HeadersInput;
  /** The raw body. `null`/`undefined` or a parsed object means a body parser consumed it first. */
  body: BodyInput | null | undefined;
}

/** The event maps receivers can have: the two job events always exist. */
export interface EventMap {
  'job.completed': unknown;
  'job.failed': unknown;
}

/** What `onAny` handlers receive: any typed event, or a verified event of a type with no schema. */
export type AnyEvent<E extends EventMap> = E[keyof E] | UnknownEvent;

/**
 * Receives each handler failure or time-out as a `JobhookError` (the original error is its `cause`),
 * with the delivery it belongs to.
 */
export type ErrorHandler = (
  error: JobhookError,
  context: { deliveryId: string | undefined; type: string },
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
   * Stops accepting deliveries (they answer 503) and resolves once running handlers finish and
   * the adapter has written their answers: the server can then be closed, or the process exit.
   */
  close(): Promise<void>;
  /** Largest body accepted, in bytes; adapters enforce it while streaming. */
  readonly maxBodyBytes: number;
  /** The event types that have a schema. */
  readonly eventTypes: readonly (keyof E & string)[];
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
}

// `& EventMap` only tells the compiler the job events always exist; it changes no field type.
type Events<S extends EventSchemas> = EventMapOf<MergedSchemas<S>> & EventMap;

/** Creates a receiver. Throws a `JobhookError` for a missing secret or invalid options. */
export function createReceiver<const S extends EventSchemas = Record<never, never>>(
  options: ReceiverOptions<S>,
): Receiver<Events<S>> {
  type E = Events<S>;
  const config = resolveOptions(options);
  const schemas: EventSchemas = { ...defaultSchemas, ...options.schemas };
  const handlersByType = new Map<string, EventHandler<unknown>[]>();
  const anyHandlers: EventHandler<unknown>[] = [];
  const errorHandlers: ErrorHandler[] = [];
  const lifecycle = inFlightTracker();
  // A shared store may share job results too (Redis pub/sub), unless `results` says otherwise.
  const results = jobResults(
    options.results === undefined ? config.dedupe?.resultChannel?.() : options.results,
    config.logger,
    config.now,
  );
  let warnedBodyUnavailable = false;

  function addHandler(type: string, handler: EventHandler<never>) {
    assertFunction(handler);
    const list = handlersByType.get(type) ?? [];
    list.push(handler as EventHandler<unknown>);
    handlersByType.set(type, list);
    return receiver;
  }

  async function receive(input: DeliveryInput): Promise<ReceiverResponse> {
    if (lifecycle.closing) return answers.shuttingDown();
    lifecycle.enter();
    try {
      return await handleDelivery(input, config);
    } catch (error) {
      config.logger.error(`jobhook: unexpected failure while receiving a delivery: ${messageOf(error)}`);
      return answers.internal();
    } finally {
      lifecycle.leave();
    }
  }

  async function handleDelivery(input: DeliveryInput, config: ResolvedOptions): Promise<ReceiverResponse> {
    const method = input.method?.toUpperCase() ?? 'POST';
    if (method !== 'POST') return answers.methodNotAllowed();
    const body = rawBytes(input.body);
    if (body === undefined) {
      // A mounting mistake repeats on every delivery: say it once, answer it every time.
      if (!warnedBodyUnavailable) config.logger.error(`jobhook: ${answers.bodyUnavailable().body}`);
      warnedBodyUnavailable = true;
      return answers.bodyUnavailable();
    }
    if (body.byteLength > config.maxBodyBytes) return answers.tooLarge(config.maxBodyBytes);

    let signedId: string | undefined;
    if (config.verify) {
      const verified = verifyDelivery(config.verify, {
        headers: readHeaders(input.headers ?? {}),
        body,
        now: config.now(),
        toleranceSeconds: config.toleranceSeconds,
      });
      const outcome = isThenable(verified) ? await verified : verified;
      if (!outcome.ok) {
        const detail = typeof outcome.detail === 'string' ? `: ${outcome.detail}` : '';
        config.logger.warn?.(`jobhook: refused a delivery (401 ${String(outcome.code)})${detail}`);
        return answers.invalidSignature(outcome.code);
      }
      signedId = outcome.id;
    }

    const parsing = parseEvent(body, schemas);
    const parsed = isThenable(parsing) ? await parsing : parsing;
    if (!parsed.ok) {
      config.logger.warn?.(`jobhook: rejected a delivery (400): ${parsed.response.body}`);
      return parsed.response;
    }
    const { type, event } = parsed;
    if (parsed.known) results.receive(type, event);
    const typed = parsed.known ? handlersByType.get(type) : undefined;
    const handlers = typed ? [...typed, ...anyHandlers] : anyHandlers;
    if (handlers.length === 0) return answers.ok();
    // The dedupe key is the event's own id: during a webhook rotation the gateway sends one event
    // under two delivery ids (one per webhook), and its handlers must still run once.
    const key = parsed.payloadId ?? signedId;
    return dispatch(handlers, event, { deliveryId: signedId ?? parsed.payloadId, type }, key);
  }

  async function dispatch(
    handlers: EventHandler<unknown>[],
    event: unknown,
    delivery: { deliveryId: string | undefined; type: string },
    key: string | undefined,
  ): Promise<ReceiverResponse> {
    const store = key === undefined ? undefined : config.dedupe;
    // The in-memory store and handlers that return no promise answer synchronously: awaiting
    // only promises saves a turn of the microtask queue for each.
    // Each claim has its own owner token, so that a store shared by many instances lets only this
    // attempt complete or release what it claimed.
    const owner = store ? globalThis.crypto.randomUUID() : '';
    if (store && key !== undefined) {
      const claimed = store.claim(key, owner);
      const claim = isThenable(claimed) ? await claimed : claimed;
      if (claim === 'done') return answers.duplicate();
      if (claim === 'busy') return answers.inProgress();
    }
    const ran = runHandlers(handlers, event, delivery, config.handlerTimeoutMs);
    const failures = isThenable(ran) ? await ran : ran;
    if (failures.length === 0) {
      if (store && key !== undefined) {
        const completed = store.complete(key, owner);
        if (completed !== undefined) await completed;
      }
      return answers.ok();
    }
    if (store && key !== undefined) await store.release(key, owner);
    await reportFailures(failures, delivery);
    return answers.handlerFailed();
  }

  async function reportFailures(
    failures: JobhookError[],
    delivery: { deliveryId: string | undefined; type: string },
  ) {
    for (const failure of failures) {
      if (errorHandlers.length === 0) {
        config.logger.error(`jobhook: delivery ${quote(delivery.deliveryId)}: ${failure.message}`);
      }
      for (const handler of errorHandlers) {
        try {
          await handler(failure, delivery);
        } catch (error) {
          config.logger.error(`jobhook: an onError handler failed: ${messageOf(error)}`);
        }
      }
    }
  }

  const receiver: Receiver<E> = {
    onJobCompleted: (handler) => addHandler('job.completed', handler),
    onJobFailed: (handler) => addHandler('job.failed', handler),
    on: (type, handler) => addHandler(type, handler),
    onAny(handler) {
      assertFunction(handler);
      anyHandlers.push(handler as EventHandler<unknown>);
      return receiver;
    },
    onError(handler) {
      assertFunction(handler);
      errorHandlers.push(handler);
      return receiver;
    },
    receive,
    fetch: createFetchHandler(receive, config.maxBodyBytes),
    close: () => lifecycle.close().then(() => results.close()),
    maxBodyBytes: config.maxBodyBytes,
    eventTypes: Object.keys(schemas),
    results,
    register: (registerOptions) =>
      registerReceiver(
        {
          secret: config.secrets[0],
          handled: anyHandlers.length > 0 ? Object.keys(schemas) : [...handlersByType.keys()],
          known: Object.keys(schemas),
        },
        registerOptions,
      ),
  };
  return receiver;
}

function assertFunction(handler: unknown): void {
  if (typeof handler !== 'function') {
    throw new JobhookError('invalid_options', 'A handler must be a function.');
  }
}

export type { DeliveryContext, EventHandler };
