import { answers, type ReceiverResponse } from '../wire/answers.js';
import { rawBytes, type BodyInput } from '../wire/body.js';
import { readBodyWithin, type BodyReader } from '../wire/read-body.js';
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
import type { DeliveryContext, EventHandler } from './run-handlers.js';
import { readHeaders, type HeaderReader, type HeadersInput } from '../wire/headers.js';
import { messageOf, quote } from '../common/logger.js';
import { inFlightTracker } from './in-flight.js';
import { resolveOptions, type ReceiverOptions } from './options.js';
import { parseEvent, type ParsedEvent } from './parse-event.js';
import { isThenable } from '../common/thenable.js';
import { checkHeaders, verifyDelivery } from './verify-delivery.js';
import { createDispatcher, type DeliveryInfo } from './dispatch.js';
import { observeDelivery, observeHandoffs, onceLogger, type DeliveryTrace } from './observe.js';
import { registerReceiver, type ReceiverRegisterOptions, type WebhookRegistrar } from './register.js';
import { jobResults, type JobResults } from '../results/job-results.js';
import type { HandoffJob } from '../handoff/handoff.js';
import { handOff } from '../handoff/hand-off.js';
import { queuedJobRunner } from '../handoff/run-queued.js';
import type { VerifyOutcome, VerifyRefusal } from '../signatures/verifier.js';

type Answer = ReceiverResponse | Promise<ReceiverResponse>;

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
   * Stops accepting deliveries (they answer 503) and resolves once running handlers (also those
   * past their timeout) and `onError` calls finish and the adapter has written their answers, or
   * after `timeoutMs` (default 30 s): the server can then be closed, or the process exit.
   */
  close(options?: CloseOptions): Promise<void>;
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
  handleQueued(job: HandoffJob): Promise<void>;
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
  const handlersByType = new Map<string, readonly EventHandler<unknown>[]>();
  // Handler lists are replaced, never changed in place, so a delivery can run one as it is while
  // a handler is added meanwhile.
  let anyHandlers: readonly EventHandler<unknown>[] = [];
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
    handlersByType.set(type, [...(handlersByType.get(type) ?? []), handler as EventHandler<unknown>]);
    return receiver;
  }

  const report = (failures: readonly JobhookError[], delivery: DeliveryInfo) => {
    for (const failure of failures) {
      if (errorHandlers.length === 0) {
        config.logger.error(`jobhook: delivery ${quote(delivery.deliveryId)}: ${failure.message}`);
      }
      for (const handler of errorHandlers) callErrorHandler(handler, failure, delivery);
    }
  };
  const dispatch = createDispatcher(config, lifecycle, report);

  /** Calls one `onError` handler without waiting for it; `close()` waits for it instead. */
  function callErrorHandler(handler: ErrorHandler, failure: JobhookError, delivery: DeliveryInfo) {
    const failed = (error: unknown) =>
      config.logger.error(`jobhook: an onError handler failed: ${messageOf(error)}`);
    try {
      const result = handler(failure, delivery);
      if (isThenable(result)) lifecycle.track(Promise.resolve(result).then(undefined, failed));
    } catch (error) {
      failed(error);
    }
  }

  // Observability: with an observer, each delivery runs under it (src/receiver/observe.ts), and the
  // steps note what they learn on `trace` (`trace?.…`: nothing at all happens without an observer).
  const observerFailed = onceLogger(config.logger);
  function receive(input: DeliveryInput): Promise<ReceiverResponse> {
    const { observer } = config;
    if (!observer) return receiveOnce(input, undefined);
    return observeDelivery(observer, observerFailed, (trace) => receiveOnce(input, trace));
  }

  /**
   * One delivery, answered synchronously inside when it can be (a body given, the Node verifier,
   * the in-memory store, handlers that return no promise): `await` only what is a promise, since
   * each await and each async function costs a turn of the microtask queue.
   */
  function receiveOnce(input: DeliveryInput, trace: DeliveryTrace | undefined): Promise<ReceiverResponse> {
    if (lifecycle.closing) return Promise.resolve(answers.shuttingDown());
    lifecycle.enter();
    let answer: Answer;
    try {
      answer = handleDelivery(input, trace);
    } catch (error) {
      answer = unexpected(error);
    }
    if (!isThenable(answer)) {
      lifecycle.leave();
      return Promise.resolve(answer);
    }
    return answer.then(
      (settled) => {
        lifecycle.leave();
        return settled;
      },
      (error: unknown) => {
        lifecycle.leave();
        return unexpected(error);
      },
    );
  }

  function unexpected(error: unknown): ReceiverResponse {
    config.logger.error(`jobhook: unexpected failure while receiving a delivery: ${messageOf(error)}`);
    return answers.internal();
  }

  /** In order: what costs nothing (method, headers), then the body, then what the body says. */
  function handleDelivery(input: DeliveryInput, trace: DeliveryTrace | undefined): Answer {
    const method = input.method === undefined ? 'POST' : input.method.toUpperCase();
    if (method !== 'POST') return answers.methodNotAllowed();
    const reader = typeof input.body === 'function' ? input.body : undefined;
    const given = reader ? undefined : rawBytes(input.body);
    if (!reader && given === undefined) {
      // A mounting mistake repeats on every delivery: say it once, answer it every time.
      if (!warnedBodyUnavailable) config.logger.error(`jobhook: ${answers.bodyUnavailable().body}`);
      warnedBodyUnavailable = true;
      return answers.bodyUnavailable();
    }
    const headers = readHeaders(input.headers ?? {});
    if (!reader) return withBody(given!, headers, undefined, trace);
    // The checks that need no body run before reading one, and the verifier is told they passed
    // (it would make them again); a body already in hand goes straight to the verifier.
    const check = config.verify?.checkHeaders;
    let checkedAt: number | undefined;
    if (typeof check === 'function') {
      checkedAt = config.now();
      const refusal = checkHeaders(check, {
        headers,
        now: checkedAt,
        toleranceSeconds: config.toleranceSeconds,
      });
      if (refusal) return refuse(refusal, trace);
    }
    return readBody(reader).then((body) =>
      body instanceof Uint8Array ? withBody(body, headers, checkedAt, trace) : body,
    );
  }

  /** `checkedAt`: when the verifier's header checks passed, if they ran before the body was read. */
  function withBody(
    body: Uint8Array,
    headers: HeaderReader,
    checkedAt: number | undefined,
    trace: DeliveryTrace | undefined,
  ): Answer {
    if (body.byteLength > config.maxBodyBytes) return answers.tooLarge(config.maxBodyBytes);
    if (!config.verify) return withSignedId(body, undefined, headers, trace);
    const verified = verifyDelivery(
      config.verify,
      checkedAt === undefined
        ? { headers, body, now: config.now(), toleranceSeconds: config.toleranceSeconds }
        : { headers, body, now: checkedAt, toleranceSeconds: config.toleranceSeconds, headersChecked: true },
    );
    const verdict = (outcome: VerifyOutcome) =>
      outcome.ok ? withSignedId(body, outcome.id, headers, trace) : refuse(outcome, trace);
    return isThenable(verified) ? Promise.resolve(verified).then(verdict) : verdict(verified);
  }

  function withSignedId(
    body: Uint8Array,
    signedId: string | undefined,
    headers: HeaderReader,
    trace: DeliveryTrace | undefined,
  ): Answer {
    const parsing = parseEvent(body, schemas);
    return isThenable(parsing)
      ? parsing.then((parsed) => withEvent(parsed, signedId, headers, trace))
      : withEvent(parsing, signedId, headers, trace);
  }

  function withEvent(
    parsed: ParsedEvent,
    signedId: string | undefined,
    headers: HeaderReader,
    trace: DeliveryTrace | undefined,
  ): Answer {
    if (!parsed.ok) {
      config.logger.warn(`jobhook: rejected a delivery (400): ${parsed.response.body}`);
      return parsed.response;
    }
    const { type, event } = parsed;
    const deliveryId = signedId ?? parsed.payloadId;
    trace?.identified(deliveryId, type);
    if (parsed.known) results.receive(type, event);
    if (config.handoff) {
      // Every verified, valid event goes to the queue, handlers here or not: the workers run them.
      const key = dedupeKeyOf(signedId, parsed.payloadId, deliveryId, type, event, headers);
      const job = { key, type, deliveryId, payload: parsed.payload, receivedAt: config.now() };
      return handOff(config.handoff, job, report);
    }
    const handlers = handlersFor(type, parsed.known);
    if (handlers.length === 0) return answers.ok();
    const key = dedupeKeyOf(signedId, parsed.payloadId, deliveryId, type, event, headers);
    return dispatch(handlers, event, { deliveryId, type }, key, trace);
  }

  /** The handlers of a type: its own (for a type with a schema), then the `onAny` ones. */
  function handlersFor(type: string, known: boolean): readonly EventHandler<unknown>[] {
    const typed = known ? handlersByType.get(type) : undefined;
    // The lists are never changed in place: one alone is passed as it is, not copied.
    return typed && anyHandlers.length > 0 ? [...typed, ...anyHandlers] : (typed ?? anyHandlers);
  }

  const runQueued = queuedJobRunner({
    schemas,
    handlersFor,
    handlerTimeoutMs: config.handlerTimeoutMs,
    report,
    track: (work) => lifecycle.track(work),
  });

  async function handleQueued(job: HandoffJob): Promise<void> {
    lifecycle.enter();
    try {
      await runQueued(job);
    } finally {
      lifecycle.leave();
    }
  }

  function refuse(refusal: VerifyRefusal, trace: DeliveryTrace | undefined): ReceiverResponse {
    if (trace) trace.refusal = refusal.code;
    const detail = typeof refusal.detail === 'string' ? `: ${refusal.detail}` : '';
    config.logger.warn(`jobhook: refused a delivery (401 ${String(refusal.code)})${detail}`);
    return answers.invalidSignature(refusal.code);
  }

  /** The delivery's dedupe key; the object a `dedupeKey` function is given is made only for it. */
  function dedupeKeyOf(
    signedId: string | undefined,
    payloadId: string | undefined,
    deliveryId: string | undefined,
    type: string,
    event: unknown,
    headers: HeaderReader,
  ): string | undefined {
    const choice = config.dedupeKey;
    if (choice === 'event') return payloadId ?? signedId;
    if (choice === 'delivery') return signedId ?? payloadId;
    const key = choice({ deliveryId, type, event, headers });
    if (key === undefined || typeof key === 'string') return key;
    throw new JobhookError('invalid_options', 'dedupeKey returned neither a string nor undefined.');
  }

  const readBody = readBodyWithin(config.maxBodyBytes, config.bodyTimeoutMs);

  async function close(options: CloseOptions = {}): Promise<void> {
    const timeoutMs = options.timeoutMs ?? 30_000;
    if (!(timeoutMs >= 0)) throw new TypeError('close({ timeoutMs }) must be a number of at least 0.');
    const drained = await lifecycle.close(timeoutMs);
    await results.close();
    if (!drained) {
      config.logger.error(
        `jobhook: close() stopped waiting after ${timeoutMs} ms with ${lifecycle.pending} ` +
          'deliveries or handlers still running; their claims lapse with the lease and the sender retries them.',
      );
    }
  }

  const receiver: Receiver<E> = {
    onJobCompleted: (handler) => addHandler('job.completed', handler),
    onJobFailed: (handler) => addHandler('job.failed', handler),
    on: (type, handler) => addHandler(type, handler),
    onAny(handler) {
      assertFunction(handler);
      anyHandlers = [...anyHandlers, handler as EventHandler<unknown>];
      return receiver;
    },
    onError(handler) {
      assertFunction(handler);
      errorHandlers.push(handler);
      return receiver;
    },
    receive,
    handleQueued,
    fetch: createFetchHandler(receive),
    close,
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
  // A queue worker reports hand-offs to the observer through reportHandoff(receiver, …).
  if (config.observer) observeHandoffs(receiver, config.observer, observerFailed);
  return receiver;
}

function assertFunction(handler: unknown): void {
  if (typeof handler !== 'function') {
    throw new JobhookError('invalid_options', 'A handler must be a function.');
  }
}

export type { DeliveryContext, EventHandler };
