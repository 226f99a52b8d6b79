import { answers, type ReceiverResponse } from '../wire/answers.js';
import { isWellFormed, rawBytes } from '../wire/body.js';
import { utf8Bytes } from '../common/bytes.js';
import { readHeaders, type HeaderReader } from '../wire/headers.js';
import { encodingRefusal } from '../wire/content-encoding.js';
import { readBodyWithin, type BodyReader } from '../wire/read-body.js';
import { JobhookError } from '../common/errors.js';
import { messageOf } from '../common/logger.js';
import { isThenable, type MaybePromise } from '../common/thenable.js';
import type { EventSchemas } from '../events/schemas.js';
import type { JobResultsFeed } from '../results/job-results.js';
import type { HandoffJob } from '../handoff/handoff.js';
import { refusalText } from '../signatures/refusals.js';
import {
  refuse,
  type SignedRequest,
  type VerifyFunction,
  type VerifyOutcome,
  type VerifyRefusal,
} from '../signatures/verifier.js';
import { TIMED_OUT, within } from '../common/bounded.js';
import { lookedUpSecrets } from './secret-lookup.js';
import { deliveryClaims, STORE_FAILED, type Claim, type ClaimTaken, type DeliveryClaims } from './claims.js';
import type { DeliveryInfo, ReportFailures } from './failures.js';
import type { InFlight } from './in-flight.js';
import { observeDelivery, onceLogger, type DeliveryTrace } from './observe.js';
import type { ResolvedOptions } from './options.js';
import { parseEvent, type ParsedEvent } from './parse-event.js';
import { runHandlers, type DeliverySource, type EventHandler } from './run-handlers.js';
import type { DeliveryInput } from './types.js';
import { webhookOutcomeKey } from './reconcile-step.js';
import { runHeaderChecks, verifyDelivery } from './verify-delivery.js';

/**
 * The path of one delivery, in the order of work of docs/design.md. A delivery is one record
 * ({@link Delivery}) that walks the steps below; each step reads what the steps before it learned
 * and writes what it learns, and gives `undefined` to go on or the answer that ends the walk (a
 * promise of either when it must wait: {@link walk} is the one place that waits for it).
 *
 *   check the request   method (405), a body at all (500), the signature headers (401)
 *   find the secrets    with a `secret` function: its secrets for this delivery (401 none, 500
 *                       when it fails or outlives bodyTimeoutMs), then the signature headers
 *   read the body       within maxBodyBytes (413) and bodyTimeoutMs (408)
 *   verify              the signature on the raw bytes (401)
 *   parse and validate  JSON and the type's schema (400); the job result is recorded
 *   claim               the dedupe key in the store (200 duplicate, 409 busy)
 *   run or hand off     the handlers, within their time-out, or the hand-off's enqueue (503)
 *   settle              complete or release the claim
 *   answer              200, or 500 when a handler failed
 *
 * An event found by polling the gateway (issue 22) is already validated: it walks from the claim
 * on ({@link Pipeline.runValidatedEvent}), through the same store and the same handlers.
 */
const STEPS = [
  checkRequest,
  findSecrets,
  readBody,
  verify,
  parseAndValidate,
  claim,
  runOrHandOff,
  settleClaim,
] as const satisfies readonly Step[];

/** Where an already-validated event starts: the claim. */
const FROM_CLAIM = STEPS.indexOf(claim);

/** What a step gives: `undefined` to go on, or the answer; a promise of either when it waits. */
type Step = (p: PipelineState, d: Delivery) => MaybePromise<ReceiverResponse | undefined>;

/** An event verified and validated elsewhere (a poll of the gateway), to run from the claim on. */
export interface ValidatedEvent {
  /** The event type, e.g. `job.completed`. */
  type: string;
  /** What handlers receive (already validated). */
  event: unknown;
  /** The dedupe key; `undefined` runs the handlers without dedupe. */
  key: string | undefined;
  /** Handlers see it as `context.source`. */
  source: DeliverySource;
  /** What handlers see as `context.deliveryId`. */
  deliveryId?: string | undefined;
}

/** What became of a {@link ValidatedEvent}. */
export type RunOutcome = 'handled' | 'duplicate' | 'in_progress' | 'failed';

/** What the pipeline needs of its receiver (createReceiver keeps the registry and the options). */
export interface PipelineDeps {
  config: ResolvedOptions;
  schemas: EventSchemas;
  /** The handlers of a type: its own (for a type with a schema), then the `onAny` ones. */
  handlersFor(type: string, known: boolean): readonly EventHandler<unknown>[];
  results: JobResultsFeed;
  report: ReportFailures;
  lifecycle: InFlight;
  /**
   * A webhook was answered 2xx (its outcome handled, already handled, handed off, or without
   * handlers): with `reconcile`, the tracker then forgets its task.
   */
  answered2xx?: ((type: string, event: unknown) => void) | undefined;
}

/** A receiver's pipeline: webhook deliveries, and already-validated events. */
export interface Pipeline {
  /** One delivery off the wire, answered. Never rejects. */
  receive(this: void, input: DeliveryInput): Promise<ReceiverResponse>;
  /**
   * Runs an event verified and validated elsewhere from the claim step on (claim, run or hand
   * off, settle), exactly as a delivery: same store, handlers, time-out and `onError`. Resolves
   * with what happened; never rejects. `close()` waits for it as for a delivery.
   */
  runValidatedEvent(this: void, validated: ValidatedEvent): Promise<RunOutcome>;
}

/** The record of one delivery as it walks the steps. A class: one is made per delivery. */
class Delivery implements DeliveryInfo {
  input: DeliveryInput | undefined = undefined;
  headers: HeaderReader | undefined = undefined;
  /** With a `secret` function, the verifier for the secrets it picked for this delivery. */
  verify: VerifyFunction | undefined = undefined;
  reader: BodyReader | undefined = undefined;
  body: Uint8Array | undefined = undefined;
  /** The body as the string it was handed over as, if it was one and well formed (see checkRequest). */
  text: string | undefined = undefined;
  /** When the header checks passed, if they ran before the body was read. */
  checkedAt: number | undefined = undefined;
  /** The time the verifier was given (the header checks' when they ran first): the result's receipt time. */
  verifiedAt: number | undefined = undefined;
  /** The delivery id the signature covers (`webhook-id`), once verified. */
  signedId: string | undefined = undefined;
  deliveryId: string | undefined = undefined;
  type = '';
  event: unknown = undefined;
  /** Whether the type has a schema. */
  known = false;
  /** The payload as decoded, before validation: what a hand-off queues. */
  payload: unknown = undefined;
  payloadId: string | undefined = undefined;
  key: string | undefined = undefined;
  keyed = false;
  handlers: readonly EventHandler<unknown>[] = NO_HANDLERS;
  claim: Claim | undefined = undefined;
  failures: readonly JobhookError[] = NO_FAILURES;
  /** The failures went to `onError` already (a time-out, reported when it passed). */
  reported = false;
  outcome: RunOutcome | undefined = undefined;
  #info: DeliveryInfo | undefined = undefined;

  constructor(
    readonly source: DeliverySource,
    readonly trace: DeliveryTrace | undefined,
  ) {}

  /**
   * The delivery as `onError` sees it: made for it alone, so it holds nothing else; made only when
   * a failure is reported (the claims are given the record, and ask for it then).
   */
  info(): DeliveryInfo {
    return (this.#info ??= { deliveryId: this.deliveryId, type: this.type });
  }
}

const NO_HANDLERS: readonly EventHandler<unknown>[] = [];
const NO_FAILURES: readonly JobhookError[] = [];

interface PipelineState extends PipelineDeps {
  claims: DeliveryClaims;
  readBody: ReturnType<typeof readBodyWithin>;
  warnedBodyUnavailable: boolean;
}

export function createPipeline(deps: PipelineDeps): Pipeline {
  const { config, lifecycle } = deps;
  const p: PipelineState = {
    ...deps,
    claims: deliveryClaims(config.logger, lifecycle, deps.report),
    readBody: readBodyWithin(config.maxBodyBytes, config.bodyTimeoutMs),
    warnedBodyUnavailable: false,
  };
  const observerFailed = onceLogger(config.logger);

  // With an observer each delivery runs under it (observe.ts), and the steps note what they learn
  // on `trace` (`trace?.…`: nothing at all happens without an observer).
  function receive(input: DeliveryInput): Promise<ReceiverResponse> {
    const { observer } = config;
    if (!observer) return receiveOnce(input, undefined);
    return observeDelivery(observer, observerFailed, (trace) => receiveOnce(input, trace));
  }

  function receiveOnce(input: DeliveryInput, trace: DeliveryTrace | undefined): Promise<ReceiverResponse> {
    if (lifecycle.closing) return Promise.resolve(answers.shuttingDown());
    const d = new Delivery('webhook', trace);
    d.input = input;
    const answered = counted(d, 0);
    const answered2xx = deps.answered2xx;
    // Only with `reconcile`: one more turn of the microtask queue per delivery, none otherwise.
    if (!answered2xx) return answered;
    return answered.then((response) => {
      if (response.status >= 200 && response.status < 300 && d.type !== '') answered2xx(d.type, d.event);
      return response;
    });
  }

  function runValidatedEvent(validated: ValidatedEvent): Promise<RunOutcome> {
    if (lifecycle.closing) return Promise.resolve('failed');
    const d = new Delivery(validated.source, undefined);
    d.type = validated.type;
    d.event = d.payload = validated.event;
    d.known = Object.hasOwn(p.schemas, validated.type);
    d.deliveryId = validated.deliveryId;
    d.key = validated.key;
    d.keyed = true;
    return counted(d, FROM_CLAIM).then(
      (answer) => d.outcome ?? (answer.status >= 200 && answer.status < 300 ? 'handled' : 'failed'),
    );
  }

  /** Walks `d` from `from` as one delivery in flight (close() waits for it); a throw is a 500, logged. */
  function counted(d: Delivery, from: number): Promise<ReceiverResponse> {
    lifecycle.enter();
    let answer: MaybePromise<ReceiverResponse>;
    try {
      answer = walk(p, d, from);
    } catch (error) {
      answer = unexpected(error);
    }
    if (!isThenable(answer)) {
      lifecycle.leave();
      return Promise.resolve(answer);
    }
    return Promise.resolve(answer).then(
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

  return { receive, runValidatedEvent };
}

/**
 * Walks `d` through the steps from `from`, synchronously for as long as no step waits (a body
 * given, the Node verifier, the in-memory store, handlers that return no promise), then answers.
 */
function walk(p: PipelineState, d: Delivery, from: number): MaybePromise<ReceiverResponse> {
  for (let at = from; at < STEPS.length; at++) {
    const result = STEPS[at]!(p, d);
    if (result === undefined) continue;
    if (!isThenable(result)) return result;
    const next = at + 1;
    return Promise.resolve(result).then((answer) => answer ?? walk(p, d, next));
  }
  return answer(d);
}

/**
 * `next(p, d, value)`, at once when `value` is not a promise, once it resolves when it is: what
 * a step does after a call that may wait, with no closure made on the synchronous path.
 */
function then<V>(
  p: PipelineState,
  d: Delivery,
  value: MaybePromise<V>,
  next: (p: PipelineState, d: Delivery, value: V) => ReceiverResponse | undefined,
): MaybePromise<ReceiverResponse | undefined> {
  return isThenable(value)
    ? Promise.resolve(value).then((settled) => next(p, d, settled))
    : next(p, d, value);
}

// ---- check the request ----------------------------------------------------------------------

/** What costs nothing: the method, a body at all, and the checks that need no body. */
function checkRequest(p: PipelineState, d: Delivery): ReceiverResponse | undefined {
  const input = d.input!;
  const method = input.method === undefined ? 'POST' : input.method.toUpperCase();
  if (method !== 'POST') return answers.methodNotAllowed();
  if (typeof input.body === 'function') d.reader = input.body;
  // A well-formed string's bytes are made only if something reads them (see bodyBytes): the
  // verifiers hash the string itself, and JSON.parse takes it as it is. One with a lone surrogate
  // is encoded at once (the surrogate as U+FFFD), and goes on as bytes.
  else if (typeof input.body === 'string' && isWellFormed(input.body)) d.text = input.body;
  else if ((d.body = rawBytes(input.body)) === undefined) return bodyUnavailable(p);
  d.headers = readHeaders(input.headers ?? {});
  return (
    encodingRefusal(d.headers) ?? (p.config.lookup ? undefined : checkSignatureHeaders(p, d, p.config.verify))
  );
}

/**
 * A body already in hand goes straight to the verifier. Before reading one, the checks that need
 * no body run, and the verifier is told they passed (it would make them again).
 */
function checkSignatureHeaders(
  p: PipelineState,
  d: Delivery,
  verifier: VerifyFunction | undefined,
): ReceiverResponse | undefined {
  const check = verifier?.checkHeaders;
  if (!d.reader || typeof check !== 'function') return undefined;
  d.checkedAt = p.config.now();
  const refusal = runHeaderChecks(check, {
    headers: d.headers!,
    now: d.checkedAt,
    toleranceSeconds: p.config.toleranceSeconds,
  });
  return refusal && refuseSignature(p, d, refusal);
}

/** A body parser consumed the body first: a mounting mistake, said once and answered every time. */
function bodyUnavailable(p: PipelineState): ReceiverResponse {
  if (!p.warnedBodyUnavailable) p.config.logger.error(`jobhook: ${answers.bodyUnavailable().body}`);
  p.warnedBodyUnavailable = true;
  return answers.bodyUnavailable();
}

// ---- find the secrets (a receiver with a `secret` function) ----------------------------------

function findSecrets(p: PipelineState, d: Delivery): MaybePromise<ReceiverResponse | undefined> {
  const { lookup } = p.config;
  if (!lookup) return undefined;
  let found: unknown;
  try {
    found = lookup.find({ headers: d.headers!, url: d.input!.url });
  } catch (error) {
    return secretLookupFailed(p, error);
  }
  const use = (given: unknown): ReceiverResponse | undefined => {
    let secrets: readonly string[];
    try {
      secrets = lookedUpSecrets(given);
    } catch (error) {
      return secretLookupFailed(p, error);
    }
    // No secret for this delivery: the same answer as a wrong signature, so that a prober learns
    // nothing about which routes or tenants exist.
    if (secrets.length === 0) {
      return refuseSignature(p, d, refuse('no_match', 'the `secret` function returned no secret'));
    }
    d.verify = lookup.verifierFor(secrets);
    return checkSignatureHeaders(p, d, d.verify);
  };
  if (!isThenable(found)) return use(found);
  return within(Promise.resolve(found), p.config.bodyTimeoutMs, { unref: true }).then(
    (given) =>
      given === TIMED_OUT
        ? secretLookupFailed(p, new Error(`no answer within ${p.config.bodyTimeoutMs} ms`))
        : use(given),
    (error: unknown) => secretLookupFailed(p, error),
  );
}

/** The lookup failed: a 500, which the sender retries (the secret may be found next time). */
function secretLookupFailed(p: PipelineState, error: unknown): ReceiverResponse {
  p.config.logger.error(`jobhook: the \`secret\` function failed: ${messageOf(error)}`);
  return answers.internal();
}

// ---- read the body --------------------------------------------------------------------------

function readBody(p: PipelineState, d: Delivery): MaybePromise<ReceiverResponse | undefined> {
  if (!d.reader) return undefined;
  return p.readBody(d.reader).then((read) => {
    if (!(read instanceof Uint8Array)) return read;
    d.body = read;
    return undefined;
  });
}

// ---- verify ---------------------------------------------------------------------------------

function verify(p: PipelineState, d: Delivery): MaybePromise<ReceiverResponse | undefined> {
  const { config } = p;
  if (bodyTooLarge(d, config.maxBodyBytes)) return answers.tooLarge(config.maxBodyBytes);
  const verifier = d.verify ?? config.verify;
  if (!verifier) return undefined;
  const headers = d.headers!;
  const { toleranceSeconds } = config;
  const now = (d.verifiedAt = d.checkedAt ?? config.now());
  const request: SignedRequest =
    d.text !== undefined
      ? new SignedText(d, headers, now, toleranceSeconds)
      : d.checkedAt === undefined
        ? { headers, body: d.body!, now, toleranceSeconds }
        : { headers, body: d.body!, now, toleranceSeconds, headersChecked: true };
  return then(p, d, verifyDelivery(verifier, request), verified);
}

/** The body's bytes: as given or read, or the string's UTF-8, made on the first call. */
function bodyBytes(d: Delivery): Uint8Array {
  return (d.body ??= utf8Bytes(d.text!));
}

/**
 * Whether the body is over `maxBytes`. A string's UTF-8 is at least one byte and at most three per
 * UTF-16 unit, so most strings are judged by their length without encoding them.
 */
function bodyTooLarge(d: Delivery, maxBytes: number): boolean {
  const { text } = d;
  if (text === undefined || d.body !== undefined) return d.body!.byteLength > maxBytes;
  if (text.length > maxBytes) return true;
  return text.length * 3 > maxBytes && bodyBytes(d).byteLength > maxBytes;
}

/**
 * What the verifier is given for a body handed over as a (well-formed) string: `text`, and `body`
 * (its UTF-8) only if the verifier reads it. Only a body given in hand is a string, so the header
 * checks did not run before.
 */
class SignedText implements SignedRequest {
  readonly #delivery: Delivery;
  readonly text: string;

  constructor(
    delivery: Delivery,
    readonly headers: HeaderReader,
    readonly now: number,
    readonly toleranceSeconds: number,
  ) {
    this.#delivery = delivery;
    this.text = delivery.text!;
  }

  get body(): Uint8Array {
    return bodyBytes(this.#delivery);
  }
}

function verified(p: PipelineState, d: Delivery, verdict: VerifyOutcome): ReceiverResponse | undefined {
  if (!verdict.ok) return refuseSignature(p, d, verdict);
  d.signedId = verdict.id;
  return undefined;
}

/** A 401: the sender gets the code's fixed text; the verifier's detail goes to the log only. */
function refuseSignature(p: PipelineState, d: Delivery, refusal: VerifyRefusal): ReceiverResponse {
  if (d.trace) d.trace.refusal = refusal.code;
  const detail = typeof refusal.detail === 'string' ? `: ${refusal.detail}` : '';
  p.config.logger.warn(`jobhook: refused a delivery (401 ${String(refusal.code)})${detail}`);
  return answers.invalidSignature(refusalText(refusal.code));
}

// ---- parse and validate ---------------------------------------------------------------------

function parseAndValidate(p: PipelineState, d: Delivery): MaybePromise<ReceiverResponse | undefined> {
  return then(p, d, parseEvent(d.text ?? d.body!, p.schemas), eventParsed);
}

function eventParsed(p: PipelineState, d: Delivery, parsed: ParsedEvent): ReceiverResponse | undefined {
  if (!parsed.ok) {
    p.config.logger.warn(`jobhook: rejected a delivery (400): ${parsed.response.body}`);
    return parsed.response;
  }
  d.type = parsed.type;
  d.event = parsed.event;
  d.known = parsed.known;
  d.payload = parsed.payload;
  d.payloadId = parsed.payloadId;
  d.deliveryId = d.signedId ?? parsed.payloadId;
  d.trace?.identified(d.deliveryId, d.type);
  // A result is real once the signature proves it: recorded before any handler runs.
  if (parsed.known) p.results.receive(d.type, d.event, d.verifiedAt);
  return undefined;
}

// ---- claim ----------------------------------------------------------------------------------

function claim(p: PipelineState, d: Delivery): MaybePromise<ReceiverResponse | undefined> {
  // With a hand-off every event goes to the queue, handlers here or not, and the queue dedupes.
  if (p.config.handoff) return undefined;
  d.handlers = p.handlersFor(d.type, d.known);
  if (d.handlers.length === 0) return answers.ok();
  const store = p.config.dedupe;
  const key = keyOf(p, d);
  if (!store || key === undefined) return undefined;
  return then(p, d, p.claims.take(store, key, d), claimTaken);
}

function claimTaken(p: PipelineState, d: Delivery, taken: ClaimTaken): ReceiverResponse | undefined {
  d.trace?.claimed(typeof taken === 'object' ? 'new' : taken);
  if (taken === 'done') {
    d.outcome = 'duplicate';
    return answers.duplicate();
  }
  if (taken === 'busy') {
    d.outcome = 'in_progress';
    return answers.inProgress();
  }
  if (taken === STORE_FAILED) {
    d.outcome = 'failed';
    return answers.internal();
  }
  d.claim = taken;
  return undefined;
}

/** The delivery's dedupe key (made once); the object a `dedupeKey` function is given is made for it alone. */
function keyOf(p: PipelineState, d: Delivery): string | undefined {
  if (d.keyed) return d.key;
  d.keyed = true;
  // Reconciling: a job outcome's key is its task's, the same as a poll of that task gives it.
  if (p.config.reconcile) {
    const key = webhookOutcomeKey(d.type, d.event);
    if (key !== undefined) return (d.key = key);
  }
  const choice = p.config.dedupeKey;
  if (choice === 'event') return (d.key = d.payloadId ?? d.signedId);
  if (choice === 'delivery') return (d.key = d.signedId ?? d.payloadId);
  const key = choice({ deliveryId: d.deliveryId, type: d.type, event: d.event, headers: d.headers! });
  if (key === undefined || typeof key === 'string') return (d.key = key);
  throw new JobhookError('invalid_options', 'dedupeKey returned neither a string nor undefined.');
}

// ---- run or hand off ------------------------------------------------------------------------

function runOrHandOff(p: PipelineState, d: Delivery): MaybePromise<ReceiverResponse | undefined> {
  if (p.config.handoff) return handOff(p, d);
  const { trace } = d;
  const ran = trace
    ? trace.timeHandlers(() => runHandlers(d.handlers, d.event, d, p.config.handlerTimeoutMs))
    : runHandlers(d.handlers, d.event, d, p.config.handlerTimeoutMs);
  // Handlers that returned no promise: no renewal, no timer, no await.
  if (Array.isArray(ran)) {
    d.failures = ran;
    return undefined;
  }
  const renewal = d.claim && p.claims.keepRenewed(d.claim, d);
  return ran.then(({ failures, late }) => {
    d.failures = failures;
    if (!late) {
      renewal?.stop();
      return undefined;
    }
    // Timed out with handlers still running: answer now, and keep the claim (renewed) until they
    // settle, so that a retry meanwhile gets 409; then complete or release it.
    const info = d.info();
    p.report(failures, info);
    d.reported = true;
    const held = d.claim;
    d.claim = undefined;
    const reported = failures.length - 1; // the time-out itself is not among `late`'s failures
    p.lifecycle.track(
      late.then(async (all) => {
        renewal?.stop();
        p.report(
          all.slice(reported).filter((failure) => !failures.includes(failure)),
          info,
        );
        if (held) await p.claims.completeOrRelease(held, all.length === 0, d);
      }),
    );
    return undefined;
  });
}

/**
 * Stores the event through the hand-off and answers 200 once it is stored, or 503 `handoff_failed`
 * (the sender retries) when it could not be; the failure goes to `onError` as `handoff_failed`.
 */
function handOff(p: PipelineState, d: Delivery): Promise<ReceiverResponse> {
  const job: HandoffJob = {
    key: keyOf(p, d),
    type: d.type,
    deliveryId: d.deliveryId,
    payload: d.payload,
    receivedAt: p.config.now(),
  };
  if (d.source !== 'webhook') job.source = d.source;
  const failed = (error: unknown): ReceiverResponse => {
    const failure =
      error instanceof JobhookError && error.code === 'handoff_failed'
        ? error
        : new JobhookError('handoff_failed', `The event could not be queued: ${messageOf(error)}`, {
            cause: error,
          });
    p.report([failure], d.info());
    d.outcome = 'failed';
    return answers.handoffFailed();
  };
  let enqueued: Promise<void>;
  try {
    enqueued = Promise.resolve(p.config.handoff!.enqueue(job));
  } catch (error) {
    return Promise.resolve(failed(error));
  }
  return enqueued.then(() => {
    d.outcome = 'handled';
    return answers.ok();
  }, failed);
}

// ---- settle ---------------------------------------------------------------------------------

/** Reports what failed, then completes (all succeeded) or releases the claim. */
function settleClaim(p: PipelineState, d: Delivery): MaybePromise<ReceiverResponse | undefined> {
  const ok = d.failures.length === 0;
  d.outcome = ok ? 'handled' : 'failed';
  if (!ok && !d.reported) p.report(d.failures, d.info());
  if (!d.claim) return undefined;
  const settled = p.claims.completeOrRelease(d.claim, ok, d);
  return isThenable(settled) ? settled.then(goOn) : undefined;
}

function goOn(): undefined {
  return undefined;
}

// ---- answer ---------------------------------------------------------------------------------

function answer(d: Delivery): ReceiverResponse {
  return d.outcome === 'failed' ? answers.handlerFailed() : answers.ok();
}
