import { answers, type ReceiverResponse } from '../wire/answers.js';
import { decodeJson, isWellFormed, rawBytes, readBodyWithin, type BodyReader } from '../wire/body.js';
import { utf8Bytes } from '../common/bytes.js';
import { readHeaders, type HeaderReader, encodingRefusal } from '../wire/headers.js';
import { JobhookError } from '../common/errors.js';
import { messageOf, quote } from '../common/logging.js';
import type { EventSchemas } from '../events/schemas.js';
import type { EventOutcome } from '../events/event-types.js';
import type { JobResultsFeed } from '../results/job-results.js';
import type { HandoffJob, QueuedAttempt } from '../handoff/handoff.js';
import {
  refusalText,
  refuse,
  type SignedRequest,
  type VerifyFunction,
  type VerifyOutcome,
  type VerifyRefusal,
} from '../signatures/verifier.js';
import { deliveryClaims, STORE_FAILED, type Claim, type ClaimTaken, type DeliveryClaims } from './claims.js';
import type { DeliveryInfo, ReportFailures } from './failures.js';
import type { InFlight } from './in-flight.js';
import {
  handoffObserver,
  observeDelivery,
  onceLogger,
  type DeliveryTrace,
  type ObservedHandoff,
} from './observe.js';
import type { ResolvedOptions } from './options.js';
import { checkPayload, type CheckedPayload } from './check-payload.js';
import { isThenable } from '../common/deadline.js';
import {
  lateSettledLine,
  runHandlers,
  type DeliverySource,
  type EventHandler,
  type HandlerRun,
} from './run-handlers.js';
import { scopedKey } from '../results/job-result.js';
import type { DeliveryInput } from './types.js';
import { bodyUnavailableLine } from './body-unavailable.js';
import { foreignSignatureHeader, refusalLog, type RefusalLog, type SignatureAlarm } from './refusal-log.js';
import { storedHeaders } from '../inbox/stored-headers.js';
import type { InboxDelivery } from '../inbox/inbox.js';
import type { InboxDoor, StoredRun, StoredRunResult } from './inbox-door.js';
import type { Confirmer } from './confirm.js';
import type { AlarmWitness } from './alarm-witness.js';
import { gateOutcome, outcomeConflict, settleMarks } from './task-outcome.js';

/**
 * The one path of an event to its handlers, with four doors:
 *
 *   webhook   receive(): the method (405), the signature headers (401), the tenant's secrets, the
 *             body within its limit (413) and time (408), the signature (401), JSON (400); then
 *   poll      runPolled(): an outcome the reconciler found by polling the gateway; and
 *   queued    runQueued(): an event a hand-off stored, run by a worker;
 *   stored    runStored(): a delivery the inbox kept, verified again (no timestamp window), then as a webhook;
 *
 * all go through {@link handle}: validate (400), record the job result, hand off (webhook, with a
 * hand-off) or claim the dedupe key (200 duplicate, 409 busy), run the handlers within their
 * time-out, settle the claim. Each event is one {@link EventRecord}; what became of it is one
 * {@link EventOutcome}. The webhook door answers the sender; the poll door tells the reconciler
 * the outcome; the queued door rejects when a handler failed, so that the queue retries.
 */
export interface Pipeline {
  /** One delivery off the wire, answered. Never rejects. */
  receive(this: void, input: DeliveryInput): Promise<ReceiverResponse>;
  /** An outcome found by polling, as the payload a webhook would carry. Never rejects. */
  runPolled(this: void, polled: PolledOutcome): Promise<EventOutcome>;
  /** An event a hand-off stored; rejects with the failure when a handler failed or timed out. */
  runQueued(this: void, job: HandoffJob, attempt?: QueuedAttempt): Promise<void>;
  /** A delivery the inbox kept, from its bytes: what became of it. Never rejects. */
  runStored(this: void, input: DeliveryInput, run: StoredRun): Promise<StoredRunResult>;
}

export type { EventOutcome };

/** An outcome the reconciler found: the payload a webhook would have carried, and whose task it is. */
export interface PolledOutcome {
  payload: unknown;
  /** The tenant the task was tracked for, if any. */
  tenant?: string | undefined;
}

/** What the pipeline needs of its receiver (createReceiver keeps the registry and the options). */
export interface PipelineDeps {
  config: ResolvedOptions;
  schemas: EventSchemas;
  /** The handlers of a type: its own (for a type with a schema), then the `onAny` ones. */
  handlersFor(type: string, known: boolean): readonly EventHandler<unknown>[];
  results: JobResultsFeed;
  report: ReportFailures;
  lifecycle: InFlight;
  /** The gateway's counters of the receiver's webhook, which confirm or not a signature alarm. */
  witness?: AlarmWitness | undefined;
  /** A webhook's job outcome was handled (or handed off, or had been handled): its task needs no poll. */
  webhookSettled?: ((taskId: string, tenant: string | undefined) => void) | undefined;
  /** With `inbox`: where a verified delivery is stored before its answer, and a refused one kept. */
  inbox?: InboxDoor | undefined;
  /** Confirm mode: each delivery is a hint, and the gateway's answer is the payload handled. */
  confirm?: Confirmer | undefined;
}

type Door = 'webhook' | 'poll' | 'queued' | 'stored';

/** One event on its way through the pipeline, whichever door it came in by. */
class EventRecord implements DeliveryInfo {
  // What the webhook door learns before the payload.
  input: DeliveryInput | undefined = undefined;
  headers: HeaderReader | undefined = undefined;
  /** With a `secret` function: the verifier of the secrets it picked. */
  verify: VerifyFunction | undefined = undefined;
  reader: BodyReader | undefined = undefined;
  body: Uint8Array | undefined = undefined;
  /** A body handed over as a well-formed string, hashed and parsed as it is. */
  text: string | undefined = undefined;
  /** When the header checks passed, if they ran before the body was read. */
  checkedAt: number | undefined = undefined;
  /** The delivery id the signature covers (`webhook-id`), once verified. */
  signedId: string | undefined = undefined;

  // What every door knows or learns.
  /** The tenant whose secret verified the webhook, or whose task was polled or queued. */
  tenant: string | undefined = undefined;
  /** When the event was accepted: the job result's receipt time. */
  receivedAt = 0;
  /** The payload as decoded, before validation: what a hand-off stores. */
  payload: unknown = undefined;
  type = '';
  event: unknown = undefined;
  /** Whether the type has a schema. */
  known = false;
  /** The payload is the gateway's own answer (a poll, or a confirmed hint): `context.confirmed`. */
  confirmed = false;
  payloadId: string | undefined = undefined;
  deliveryId: string | undefined = undefined;
  /** The dedupe key; fixed in advance for a queued event. */
  key: string | undefined = undefined;
  keyed = false;
  attempt: number | undefined = undefined;
  /** A replay with `force`: it runs without the dedupe claim. */
  force = false;
  claim: Claim | undefined = undefined;
  failures: readonly JobhookError[] = [];
  outcome: EventOutcome = 'failed';
  #info: DeliveryInfo | undefined = undefined;

  constructor(
    readonly door: Door,
    readonly source: DeliverySource,
    readonly trace: DeliveryTrace | undefined,
  ) {}

  /** The event as `onError` sees it: made only when a failure is reported. */
  info(): DeliveryInfo {
    return (this.#info ??= { deliveryId: this.deliveryId, type: this.type, tenant: this.tenant });
  }
}

interface PipelineState extends PipelineDeps {
  claims: DeliveryClaims;
  refusals: RefusalLog;
  readBody: ReturnType<typeof readBodyWithin>;
  warnedBodyUnavailable: boolean;
  startedFirst: ((handoff: ObservedHandoff) => void) | undefined;
}

export function createPipeline(deps: PipelineDeps): Pipeline {
  const { config, lifecycle } = deps;
  const observerFailed = onceLogger(config.logger);
  const p: PipelineState = {
    ...deps,
    claims: deliveryClaims(config.logger, lifecycle, deps.report),
    refusals: refusalLog(
      config.logger,
      config.now,
      signaturesFailing(config, observerFailed),
      deps.witness,
      (work) => lifecycle.track(work),
    ),
    readBody: readBodyWithin(config.maxBodyBytes, config.bodyTimeoutMs),
    warnedBodyUnavailable: false,
    startedFirst: handoffObserver(config.observer, observerFailed),
  };

  function receive(input: DeliveryInput): Promise<ReceiverResponse> {
    if (lifecycle.closing) return Promise.resolve(answers.shuttingDown());
    const { observer } = config;
    if (!observer) return receiveDelivery(p, new EventRecord('webhook', 'webhook', undefined), input);
    return observeDelivery(observer, observerFailed, (trace) =>
      receiveDelivery(p, new EventRecord('webhook', 'webhook', trace), input),
    );
  }

  let warnedUntenanted = false;
  async function runPolled(polled: PolledOutcome): Promise<EventOutcome> {
    if (lifecycle.closing) return 'failed';
    // Its webhook would carry a tenant's key and this poll none: the handlers could run twice.
    if (config.lookup && polled.tenant === undefined) {
      if (!warnedUntenanted) {
        config.logger.error(
          'jobhook: a task was tracked without a tenant, but this receiver picks secrets per tenant: create ' +
            'the submitting client with createClient({ jobs, tenant }). Such tasks are not polled.',
        );
      }
      warnedUntenanted = true;
      return 'invalid';
    }
    const d = new EventRecord('poll', 'poll', undefined);
    d.payload = polled.payload;
    d.confirmed = true;
    // A receiver with one secret has no tenants, whatever the tracker says.
    d.tenant = config.lookup ? polled.tenant : undefined;
    d.receivedAt = config.now();
    lifecycle.enter();
    try {
      await handle(p, d);
      return d.outcome;
    } catch (error) {
      unexpected(p, error);
      return 'failed';
    } finally {
      lifecycle.leave();
    }
  }

  async function runQueued(job: HandoffJob, attempt?: QueuedAttempt): Promise<void> {
    if (!isHandoffJob(job)) {
      throw new JobhookError(
        'invalid_job',
        'handleQueued takes a job a hand-off stored: { key, type, deliveryId, payload, receivedAt }.',
      );
    }
    const d = new EventRecord('queued', job.source === 'poll' ? 'poll' : 'webhook', undefined);
    d.payload = job.payload;
    d.type = job.type;
    d.tenant = typeof job.tenant === 'string' ? job.tenant : undefined;
    d.confirmed = job.confirmed === true || job.source === 'poll';
    d.deliveryId = job.deliveryId ?? undefined;
    d.key = job.key;
    d.keyed = true;
    d.attempt = attempt?.attempt;
    d.receivedAt = typeof job.receivedAt === 'number' ? job.receivedAt : config.now();
    // The time from hand-off to first start; a retry's start would count its back-off too.
    if (d.attempt === 1) {
      p.startedFirst?.({
        deliveryId: d.deliveryId,
        type: d.type,
        latencyMs: Math.max(0, Date.now() - d.receivedAt),
      });
    }
    lifecycle.enter();
    try {
      await handle(p, d);
    } finally {
      lifecycle.leave();
    }
    if (d.outcome === 'handled') return;
    throw d.failures[0] ?? new JobhookError('handler_failed', `The queued ${d.type} event failed.`);
  }

  async function runStored(input: DeliveryInput, run: StoredRun): Promise<StoredRunResult> {
    if (lifecycle.closing) return { outcome: 'failed', answer: answers.shuttingDown() };
    const d = new EventRecord('stored', run.source, undefined);
    d.attempt = run.attempt;
    d.force = run.force === true;
    const answer = await receiveDelivery(p, d, input);
    return { outcome: d.outcome, answer };
  }

  return { receive, runPolled, runQueued, runStored };
}

function unexpected(p: PipelineState, error: unknown): ReceiverResponse {
  p.config.logger.error(`jobhook: unexpected failure while handling an event: ${messageOf(error)}`);
  return answers.internal();
}

function webhookSettled(p: PipelineState, d: EventRecord): void {
  if (!p.webhookSettled || d.type === '') return;
  const taskId = jobTaskId(d.type, d.event);
  if (taskId !== undefined) p.webhookSettled(taskId, d.tenant);
}

// ---- the webhook door -----------------------------------------------------------------------

/** An answer now, or once something it waited for (a body, a store, a handler) settled. */
type Answer = ReceiverResponse | Promise<ReceiverResponse>;

/**
 * One delivery off the wire, answered; counted in flight (close() waits for it); a throw is a 500,
 * logged. The steps run synchronously for as long as nothing waits (a body in hand, the Node
 * verifier, the in-memory store, handlers that return nothing), and an answer given at once is
 * not sent through a `then`: either costs a delivery more than checking what each step returned.
 */
function receiveDelivery(p: PipelineState, d: EventRecord, input: DeliveryInput): Promise<ReceiverResponse> {
  p.lifecycle.enter();
  let answer: Answer;
  try {
    d.input = input;
    answer = checkRequest(p, d) ?? (p.config.lookup || d.reader ? readAndVerify(p, d) : verify(p, d));
  } catch (error) {
    answer = threw(p, d, error);
  }
  if (!(answer instanceof Promise)) return Promise.resolve(answered(p, d, answer));
  return answer.then(
    (settled) => answered(p, d, settled),
    (error: unknown) => answered(p, d, threw(p, d, error)),
  );
}

/** A step threw: a 500, and whatever the event's outcome had become, it settled nothing. */
function threw(p: PipelineState, d: EventRecord, error: unknown): ReceiverResponse {
  d.outcome = 'failed';
  return unexpected(p, error);
}

/** The delivery is no longer in flight; a job outcome it settled needs no poll. */
function answered(p: PipelineState, d: EventRecord, answer: ReceiverResponse): ReceiverResponse {
  p.lifecycle.leave();
  try {
    if (d.outcome === 'handled' || d.outcome === 'duplicate') webhookSettled(p, d);
  } catch (error) {
    return threw(p, d, error);
  }
  return answer;
}

/** The tenant's secrets (with a `secret` function) and the body (with a reader), then the signature. */
async function readAndVerify(p: PipelineState, d: EventRecord): Promise<ReceiverResponse> {
  if (p.config.lookup) {
    const failed = await findSecrets(p, d);
    if (failed) return failed;
  }
  if (d.reader) {
    const read = await p.readBody(d.reader);
    if (!(read instanceof Uint8Array)) return read;
    d.body = read;
  }
  return verify(p, d);
}

/** The body within its limit, then the signature (401); a verifier that throws refuses, never a 500. */
function verify(p: PipelineState, d: EventRecord): Answer {
  if (bodyTooLarge(d, p.config.maxBodyBytes)) return answers.tooLarge(p.config.maxBodyBytes);
  d.receivedAt = d.checkedAt ?? p.config.now();
  const verifier = d.verify ?? p.config.verify;
  if (!verifier) return decode(p, d);
  let verdict: VerifyOutcome | PromiseLike<VerifyOutcome>;
  try {
    verdict = verifier(signedRequest(p, d));
  } catch (error) {
    // A verifier that throws on malformed input (as Stripe's does on `t=,v1=`) is a 401, never a 500.
    verdict = verifierThrew(error);
  }
  if (!isThenable(verdict)) return verified(p, d, verdict);
  return Promise.resolve(verdict).then(
    (settled) => verified(p, d, settled),
    (error: unknown) => verified(p, d, verifierThrew(error)),
  );
}

const verifierThrew = (error: unknown) => refuse('no_match', `The verifier threw: ${messageOf(error)}`);

function verified(p: PipelineState, d: EventRecord, verdict: VerifyOutcome): Answer {
  if (!verdict.ok) return refuseSignature(p, d, verdict);
  d.signedId = verdict.id;
  p.refusals.verified(d.tenant);
  return decode(p, d);
}

/** The body as JSON (400 if it is not), mapped by a contract if the receiver has one, then handled. */
function decode(p: PipelineState, d: EventRecord): Answer {
  const decoded = decodeJson(d.text ?? d.body!);
  if (!decoded.ok) return rejected(p, d, answers.invalidJson(decoded.message));
  d.payload = p.config.mapPayload ? p.config.mapPayload(decoded.value, d.headers!) : decoded.value;
  if (!p.confirm) return handle(p, d);
  const hint = { deliveryId: d.signedId, type: '', tenant: d.tenant };
  return p.confirm.confirm(
    d.payload,
    hint,
    (confirmed) => handleConfirmed(p, d, confirmed),
    (line) => p.refusals.refused(line),
  );
}

/** Confirm mode: the gateway's answer about the hint's task replaces the body's payload. */
function handleConfirmed(p: PipelineState, d: EventRecord, confirmed: unknown): Answer {
  d.payload = confirmed;
  d.confirmed = true;
  return handle(p, d);
}

/** What costs nothing: the method, a body at all, and the checks that need no body. */
function checkRequest(p: PipelineState, d: EventRecord): ReceiverResponse | undefined {
  const input = d.input!;
  const method = input.method === undefined ? 'POST' : input.method.toUpperCase();
  if (method !== 'POST') return answers.methodNotAllowed();
  if (typeof input.body === 'function') d.reader = input.body;
  // A well-formed string's bytes are made only if something reads them (see bodyBytes).
  else if (typeof input.body === 'string' && isWellFormed(input.body)) d.text = input.body;
  else if ((d.body = rawBytes(input.body)) === undefined) return bodyUnavailable(p, input.framework);
  d.headers = readHeaders(input.headers ?? {});
  const encoded = encodingRefusal(d.headers);
  if (encoded) return encoded;
  // With a `secret` function the checks run before the secrets are looked up, whether or not a
  // body is in hand, so that a prober cannot tell a tenant that exists by a different refusal.
  if (!d.reader && !p.config.lookup) return undefined;
  return checkSignatureHeaders(
    p,
    d,
    p.config.lookup ? p.config.lookup.checkHeaders : p.config.verify?.checkHeaders,
  );
}

/** The verifier's checks that need no body; the verifier is then told they passed. */
function checkSignatureHeaders(
  p: PipelineState,
  d: EventRecord,
  check: VerifyFunction['checkHeaders'],
): ReceiverResponse | undefined {
  if (typeof check !== 'function') return undefined;
  d.checkedAt = p.config.now();
  let refusal: VerifyRefusal | undefined;
  try {
    refusal = check({ headers: d.headers!, now: d.checkedAt, toleranceSeconds: toleranceOf(p, d) });
  } catch (error) {
    refusal = refuse('no_match', `The verifier's header check threw: ${messageOf(error)}`);
  }
  return refusal ? refuseSignature(p, d, refusal) : undefined;
}

/** A body parser consumed the body first: a mounting mistake, said once and answered every time. */
function bodyUnavailable(p: PipelineState, framework: DeliveryInput['framework']): ReceiverResponse {
  if (!p.warnedBodyUnavailable) p.config.logger.error(bodyUnavailableLine(framework));
  p.warnedBodyUnavailable = true;
  return answers.bodyUnavailable();
}

/**
 * The tenant's secrets, from the `secret` function. A tenant that does not exist goes on as if it
 * did, to be refused as a wrong signature once its body was read: a prober learns nothing.
 */
async function findSecrets(p: PipelineState, d: EventRecord): Promise<ReceiverResponse | undefined> {
  const lookup = p.config.lookup!;
  try {
    const found = await lookup.find({ headers: d.headers!, url: d.input!.url }, p.config.bodyTimeoutMs);
    if (found) {
      d.verify = found.verify;
      d.tenant = found.tenant;
    } else d.verify = noSecret;
    return undefined;
  } catch (error) {
    // The sender retries a 500: the secret may be found next time.
    p.config.logger.error(`jobhook: the \`secret\` function failed: ${messageOf(error)}`);
    return answers.internal();
  }
}

const noSecret: VerifyFunction = () => refuse('no_match', 'the `secret` function returned no secret');

/** What the verifier is given: the body, and `headersChecked` when the header checks ran first. */
function signedRequest(p: PipelineState, d: EventRecord): SignedRequest {
  const headers = d.headers!;
  const toleranceSeconds = toleranceOf(p, d);
  const request: SignedRequest =
    d.text !== undefined
      ? new SignedText(d, headers, d.receivedAt, toleranceSeconds)
      : { headers, body: d.body!, now: d.receivedAt, toleranceSeconds };
  if (d.checkedAt !== undefined) request.headersChecked = true;
  return request;
}

/** A stored delivery is verified again with no timestamp window: its signature is what was checked at arrival. */
function toleranceOf(p: PipelineState, d: EventRecord): number {
  return d.door === 'stored' ? Infinity : p.config.toleranceSeconds;
}

/** The body's bytes: as given or read, or the string's UTF-8, made on the first call. */
function bodyBytes(d: EventRecord): Uint8Array {
  return (d.body ??= utf8Bytes(d.text!));
}

/**
 * Whether the body is over `maxBytes`. A string's UTF-8 is at least one byte and at most three per
 * UTF-16 unit, so most strings are judged by their length without encoding them.
 */
function bodyTooLarge(d: EventRecord, maxBytes: number): boolean {
  const { text } = d;
  if (text === undefined || d.body !== undefined) return d.body!.byteLength > maxBytes;
  if (text.length > maxBytes) return true;
  return text.length * 3 > maxBytes && bodyBytes(d).byteLength > maxBytes;
}

/** What the verifier is given for a body handed over as a string: `body` is made only if read. */
class SignedText implements SignedRequest {
  readonly #record: EventRecord;
  readonly text: string;
  headersChecked?: boolean;

  constructor(
    record: EventRecord,
    readonly headers: HeaderReader,
    readonly now: number,
    readonly toleranceSeconds: number,
  ) {
    this.#record = record;
    this.text = record.text!;
  }

  get body(): Uint8Array {
    return bodyBytes(this.#record);
  }
}

/** A 401: the sender gets the code's fixed text; the verifier's detail goes to the log only. */
function refuseSignature(p: PipelineState, d: EventRecord, refusal: VerifyRefusal): ReceiverResponse {
  if (d.trace) d.trace.refusal = refusal.code;
  const detail = typeof refusal.detail === 'string' ? `: ${refusal.detail}` : '';
  const foreignHeader = refusal.code === 'missing_header' ? foreignSignatureHeader(d.headers) : undefined;
  const foreign = foreignHeader
    ? `; it carries ${foreignHeader}, another family's signature header: run \`jobhook probe\` to learn how the gateway signs`
    : '';
  p.refusals.refused(`jobhook: refused a delivery (401 ${String(refusal.code)})${detail}${foreign}`, {
    code: refusal.code,
    tenant: d.tenant,
    foreignHeader,
  });
  d.outcome = 'invalid';
  keepRefused(p, d, `401 ${String(refusal.code)}${detail}`);
  return answers.invalidSignature(refusalText(refusal.code));
}

/** A 400 for a body or payload that will never pass: logged at warn. */
function rejected(p: PipelineState, d: EventRecord, answer: ReceiverResponse): ReceiverResponse {
  p.refusals.refused(`jobhook: rejected a delivery (400): ${answer.body}`);
  d.outcome = 'invalid';
  keepRefused(p, d, `400 ${answer.body}`);
  return answer;
}

/** With an inbox, a refused webhook whose body was read goes to its quarantine, with the reason. */
function keepRefused(p: PipelineState, d: EventRecord, reason: string): void {
  if (!p.inbox || d.door !== 'webhook' || (d.body === undefined && d.text === undefined)) return;
  p.inbox.refused(inboxDelivery(d), reason);
}

/** What the inbox keeps of a delivery: its bytes, headers, URL and what was learnt of it. */
function inboxDelivery(d: EventRecord): InboxDelivery {
  return {
    body: bodyBytes(d),
    headers: storedHeaders(d.input!.headers ?? {}),
    url: d.input!.url,
    receivedAt: d.receivedAt,
    tenant: d.tenant,
    type: d.type === '' ? undefined : d.type,
    deliveryId: d.deliveryId ?? d.signedId,
  };
}

// ---- every door -----------------------------------------------------------------------------

/**
 * Validates the payload, records the job result, then hands the event off or runs its handlers
 * under its dedupe claim; sets `d.outcome` and gives the webhook's answer. Like the webhook door,
 * it waits only for what answered with a promise (an async schema, a shared store, a handler).
 */
function handle(p: PipelineState, d: EventRecord): Answer {
  const checked = checkPayload(d.payload, p.schemas);
  if (checked instanceof Promise) return checked.then((settled) => identify(p, d, settled));
  return identify(p, d, checked);
}

function identify(p: PipelineState, d: EventRecord, checked: CheckedPayload): Answer {
  if (!checked.ok || (d.door === 'queued' && checked.type !== d.type)) return invalid(p, d, checked);
  d.type = checked.type;
  d.event = checked.event;
  d.known = checked.known;
  d.payloadId = checked.payloadId;
  d.deliveryId ??= d.signedId ?? d.payloadId;
  d.trace?.identified(d.deliveryId, d.type);
  // With an inbox, a webhook is stored and answered; its handlers run from the inbox (the stored door).
  if (p.inbox && d.door === 'webhook') return p.inbox.accept(inboxDelivery(d));
  // A result is real once the signature (or the gateway's own answer) proves it: recorded before
  // any handler runs, so a wait on the task wakes whichever door the outcome came in by.
  if (d.known) p.results.receive(d.type, d.event, d.receivedAt, d.tenant);
  if (p.config.handoff && d.door !== 'queued') return handOff(p, d);
  const handlers = p.handlersFor(d.type, d.known);
  if (handlers.length === 0) {
    d.outcome = 'handled';
    return answers.ok();
  }
  const store = d.door === 'queued' || d.force ? undefined : p.config.dedupe;
  const key = store && keyOf(p, d);
  if (key === undefined) return run(p, d, handlers);
  // A store that answers at once (the in-memory one) is not awaited: no turn of the microtask queue.
  const taken = p.claims.take(store!, key, d);
  if (taken instanceof Promise) return taken.then((settled) => claimed(p, d, handlers, settled));
  return claimed(p, d, handlers, taken);
}

function claimed(p: PipelineState, d: EventRecord, handlers: Handlers, taken: ClaimTaken): Answer {
  d.trace?.claimed(typeof taken === 'object' ? 'new' : taken);
  if (typeof taken !== 'object') return notClaimed(d, taken);
  d.claim = taken;
  const taskId = jobTaskId(d.type, d.event);
  if (taskId !== undefined) return oneOutcome(p, d, handlers, taskId);
  return run(p, d, handlers);
}

/** One job, one outcome (task-outcome.ts): another outcome handled first for the task is a conflict, answered 2xx. */
async function oneOutcome(p: PipelineState, d: EventRecord, handlers: Handlers, taskId: string) {
  const delivery = { type: d.type, taskId, tenant: d.tenant, delivery: d };
  const gate = await gateOutcome(p.claims, d.claim!.store, delivery);
  if (!gate || gate.run) {
    const answer = await run(p, d, handlers);
    if (gate) await settleMarks(p.claims, gate.marks, d.type, d.outcome === 'handled', d);
    return answer;
  }
  const conflict = gate.answer === 'conflict';
  if (conflict) {
    if (d.trace) d.trace.conflict = true;
    p.report([outcomeConflict(taskId, d.type, gate.winner!, d.deliveryId)], d.info());
  }
  await p.claims.completeOrRelease(d.claim!, conflict, d);
  d.claim = undefined;
  if (!conflict) return notClaimed(d, gate.answer === 'busy' ? 'busy' : STORE_FAILED);
  d.outcome = 'duplicate';
  return answers.ok();
}

type Handlers = readonly EventHandler<unknown>[];

/** Runs the handlers within their time-out, reports their failures, then settles the claim. */
function run(p: PipelineState, d: EventRecord, handlers: Handlers): Answer {
  const started = d.trace ? performance.now() : 0;
  const ran = runHandlers(handlers, d.event, d, p.config.handlerTimeoutMs);
  if (!Array.isArray(ran)) return ranLate(p, d, ran).then(() => ranAll(p, d, started));
  d.failures = ran;
  return ranAll(p, d, started);
}

function ranAll(p: PipelineState, d: EventRecord, started: number): Answer {
  if (d.trace) d.trace.handlerMs = performance.now() - started;
  if (d.failures.length > 0) p.report(d.failures, d.info());
  const ok = d.failures.length === 0;
  d.outcome = ok ? 'handled' : 'failed';
  const answer = ok ? answers.ok() : answers.handlerFailed();
  const settling = d.claim && p.claims.completeOrRelease(d.claim, ok, d);
  return settling ? settling.then(() => answer) : answer;
}

/** A payload that will never pass: 400 for a webhook, `invalid` for a poll, `invalid_job` for a queued event. */
function invalid(p: PipelineState, d: EventRecord, checked: CheckedPayload): ReceiverResponse {
  const message = checked.ok ? `its payload is of type ${quote(checked.type)}` : checked.message;
  d.outcome = 'invalid';
  if (d.door === 'webhook' || d.door === 'stored') {
    return rejected(p, d, checked.ok ? answers.invalidPayload(message) : checked.answer);
  }
  if (d.door === 'poll') {
    p.config.logger.warn(`jobhook: refused a polled outcome (400): ${message}`);
    return answers.invalidPayload(message);
  }
  const error = new JobhookError('invalid_job', `The queued ${d.type} event ${quote(d.key)}: ${message}`, {
    deliveryId: d.deliveryId,
    eventType: d.type,
  });
  d.failures = [error];
  p.report(d.failures, d.info());
  return answers.invalidPayload(message);
}

/** The answer to an event whose key is handled, held or unreachable: it does not run now. */
function notClaimed(d: EventRecord, taken: Exclude<ClaimTaken, Claim>): ReceiverResponse {
  d.outcome = taken === 'done' ? 'duplicate' : taken === 'busy' ? 'busy' : 'failed';
  if (taken === 'done') return answers.duplicate();
  return taken === STORE_FAILED ? answers.internal() : answers.inProgress();
}

/**
 * The event's dedupe key, scoped to its tenant: with `reconcile`, a job outcome's key is its
 * task's, so that the webhook and a poll of the task converge on one key.
 */
function keyOf(p: PipelineState, d: EventRecord): string | undefined {
  if (d.keyed) return d.key;
  d.keyed = true;
  const taskId = p.config.reconcile || p.confirm ? jobTaskId(d.type, d.event) : undefined;
  const choice = p.config.dedupeKey;
  let key: string | undefined;
  if (taskId !== undefined) key = `task:${taskId}`;
  else if (choice === 'event') key = d.payloadId ?? d.signedId;
  else if (choice === 'delivery') key = d.signedId ?? d.payloadId;
  else {
    const chosen: unknown = choice({
      deliveryId: d.deliveryId,
      type: d.type,
      event: d.event,
      headers: d.headers ?? NO_HEADERS,
      tenant: d.tenant,
    });
    if (chosen !== undefined && typeof chosen !== 'string') {
      throw new JobhookError('invalid_options', 'dedupeKey returned neither a string nor undefined.');
    }
    key = chosen;
  }
  return (d.key = key === undefined ? undefined : scopedKey(d.tenant, key));
}

const NO_HEADERS: HeaderReader = { get: () => undefined };

/**
 * Waits for handlers that returned promises, within their time-out. Past it the event has failed
 * (the handlers' signal is aborted, the time-out reported); handlers still running keep the claim,
 * renewed, until they settle, and `close()` waits for them.
 */
async function ranLate(p: PipelineState, d: EventRecord, ran: Promise<HandlerRun>): Promise<void> {
  const renewal = d.claim && p.claims.keepRenewed(d.claim, d);
  const { failures, late } = await ran;
  d.failures = failures;
  if (!late) return renewal?.stop();
  const held = d.claim;
  d.claim = undefined;
  const reported = failures.length - 1; // the time-out is not among `late`'s failures
  p.lifecycle.track(
    late.then(async (all) => {
      renewal?.stop();
      p.config.logger.warn(lateSettledLine(d, all, failures.at(-1), held !== undefined));
      p.report(
        all.slice(reported).filter((failure) => !failures.includes(failure)),
        d.info(),
      );
      if (held) await p.claims.completeOrRelease(held, all.length === 0, d);
    }),
  );
}

/**
 * Stores the event through the hand-off and answers 200 once it is stored, or 503 `handoff_failed`
 * (the sender retries) when it could not be; the failure goes to `onError` as `handoff_failed`.
 */
async function handOff(p: PipelineState, d: EventRecord): Promise<ReceiverResponse> {
  const job: HandoffJob = {
    key: keyOf(p, d),
    type: d.type,
    deliveryId: d.deliveryId,
    payload: d.payload,
    receivedAt: p.config.now(),
  };
  if (d.source === 'poll') job.source = 'poll';
  if (d.tenant !== undefined) job.tenant = d.tenant;
  if (d.confirmed && d.source === 'webhook') job.confirmed = true;
  try {
    await p.config.handoff!.enqueue(job);
  } catch (error) {
    const failure =
      error instanceof JobhookError && error.code === 'handoff_failed'
        ? error
        : new JobhookError('handoff_failed', `The event could not be queued: ${messageOf(error)}`, {
            cause: error,
          });
    d.failures = [failure];
    p.report(d.failures, d.info());
    d.outcome = 'failed';
    return answers.handoffFailed();
  }
  d.outcome = 'handled';
  return answers.ok();
}

/** The task id of a job outcome event, `undefined` for any other event. */
function jobTaskId(type: string, event: unknown): string | undefined {
  if (type !== 'job.completed' && type !== 'job.failed') return undefined;
  const taskId = (event as { data?: { task_id?: unknown } } | null)?.data?.task_id;
  return typeof taskId === 'string' && taskId.length > 0 ? taskId : undefined;
}

function isHandoffJob(job: unknown): job is HandoffJob {
  if (typeof job !== 'object' || job === null) return false;
  const { key, type, deliveryId } = job as Record<string, unknown>;
  return (
    (key === undefined || typeof key === 'string') &&
    typeof type === 'string' &&
    (deliveryId === undefined || deliveryId === null || typeof deliveryId === 'string') &&
    'payload' in job
  );
}

/** The observer's `signaturesFailing()`, if it has one; a failure is logged once. */
function signaturesFailing(config: ResolvedOptions, warnOnce: (message: string) => void) {
  const { observer } = config;
  if (typeof observer?.signaturesFailing !== 'function') return undefined;
  return (alarm: SignatureAlarm) => {
    try {
      observer.signaturesFailing!(alarm);
    } catch (error) {
      warnOnce(`jobhook: the receiver's observer failed in signaturesFailing(): ${messageOf(error)}`);
    }
  };
}
