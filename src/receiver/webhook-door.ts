import { answers, type ReceiverResponse } from '../wire/answers.js';
import { decodeJson, isWellFormed, rawBytes, type BodyReader, type readBodyWithin } from '../wire/body.js';
import { utf8Bytes } from '../common/bytes.js';
import { readHeaders, type HeaderReader, encodingRefusal } from '../wire/headers.js';
import { messageOf } from '../common/logging.js';
import { isRecord } from '../common/values.js';
import type { EventOutcome } from '../events/event-types.js';
import {
  refusalText,
  refuse,
  type SignedRequest,
  type VerifyFunction,
  type VerifyOutcome,
  type VerifyRefusal,
} from '../signatures/verifier.js';
import { storedHeaders } from '../inbox/stored-headers.js';
import type { InboxDelivery } from '../inbox/inbox.js';
import type { DeliverySource } from './run-handlers.js';
import type { DeliveryInput } from './types.js';
import type { DeliveryTrace } from './observe.js';
import type { TenantLookup } from './tenants.js';
import type { InboxDoor } from './inbox-door.js';
import type { Confirmer } from './confirm.js';
import { bodyUnavailableLine } from './body-unavailable.js';
import { foreignSignatureHeader, type RefusalLog } from './refusal-log.js';
import {
  EventRecord,
  handle,
  jobTaskId,
  outcomeOf,
  validate,
  type Ending,
  type HandleDeps,
  type Step,
} from './handle-event.js';

/**
 * The webhook door: a delivery off the wire (or one the inbox kept, read again) checked step by
 * step, each refusal answered at once: the method (405), the signature headers (401), the tenant's
 * secrets, the body within its limit (413) and time (408), the signature (401), JSON (400); then,
 * in confirm mode, the gateway's answer for the hint's task; then the shared steps
 * (handle-event.ts), whose ending this door alone turns into an HTTP answer.
 */
export interface WebhookDoorDeps extends HandleDeps {
  refusals: RefusalLog;
  readBody: ReturnType<typeof readBodyWithin>;
  /** With `inbox`: where a verified delivery is stored before its answer, and a refused one kept. */
  inbox: InboxDoor | undefined;
  /** Confirm mode: each delivery is a hint, and the gateway's answer is the payload handled. */
  confirm: Confirmer | undefined;
  /** A webhook's job outcome was handled (or had been): its task needs no poll. */
  webhookSettled: ((taskId: string, tenant: string | undefined) => void) | undefined;
  /** Logs a failure no step expected and gives its 500. */
  unexpected(error: unknown): ReceiverResponse;
  /** The body-unavailable mistake was logged: it is said once per receiver. */
  warnedBodyUnavailable: boolean;
}

/** A delivery as the webhook door reads it: the shared record, and what only the wire has. */
export class WebhookDelivery extends EventRecord {
  /** With a `secret` function: the verifier of the secrets it picked. */
  verify: VerifyFunction | undefined = undefined;
  reader: BodyReader | undefined = undefined;
  body: Uint8Array | undefined = undefined;
  /** A body handed over as a well-formed string, hashed and parsed as it is. */
  text: string | undefined = undefined;
  /** When the header checks passed, if they ran before the body was read. */
  checkedAt: number | undefined = undefined;
  /** What became of it, once known: read by the inbox when it ran a stored delivery. */
  outcome: EventOutcome | undefined = undefined;

  constructor(
    source: DeliverySource,
    trace: DeliveryTrace | undefined,
    readonly input: DeliveryInput,
    /**
     * Off the wire, not read again from the inbox: checked against the timestamp window, stored in
     * the inbox when the receiver has one, and kept in its quarantine when refused.
     */
    readonly live: boolean,
  ) {
    super(source, trace);
  }
}

/** An answer, or the ending of the shared steps, which {@link answered} turns into one. */
type Reply = ReceiverResponse | Ending;
type Replied = Reply | Promise<Reply>;

/**
 * One delivery, answered; counted in flight (close() waits for it); a throw is a 500, logged.
 * The steps run synchronously for as long as nothing waits (a body in hand, the Node verifier, the
 * in-memory store, handlers that return nothing), and an answer given at once is not sent through
 * a `then`: either costs a delivery more than checking what each step returned.
 */
export function receiveDelivery(p: WebhookDoorDeps, w: WebhookDelivery): Promise<ReceiverResponse> {
  p.lifecycle.enter();
  let reply: Replied;
  try {
    reply = checkRequest(p, w) ?? (p.config.lookup || w.reader ? readAndVerify(p, w) : verify(p, w));
  } catch (error) {
    reply = threw(p, w, error);
  }
  if (!(reply instanceof Promise)) return Promise.resolve(answered(p, w, reply));
  return reply.then(
    (settled) => answered(p, w, settled),
    (error: unknown) => answered(p, w, threw(p, w, error)),
  );
}

/** A step threw: a 500, and whatever the event's outcome had become, it settled nothing. */
function threw(p: WebhookDoorDeps, w: WebhookDelivery, error: unknown): ReceiverResponse {
  w.outcome = 'failed';
  return p.unexpected(error);
}

/** The delivery is no longer in flight; a job outcome it settled needs no poll. */
function answered(p: WebhookDoorDeps, w: WebhookDelivery, reply: Reply): ReceiverResponse {
  p.lifecycle.leave();
  try {
    const answer = typeof reply === 'string' ? answerFor(p, w, reply) : reply;
    if ((w.outcome === 'handled' || w.outcome === 'duplicate') && p.webhookSettled && w.type !== '') {
      const taskId = jobTaskId(w.type, w.event);
      if (taskId !== undefined) p.webhookSettled(taskId, w.tenant);
    }
    return answer;
  } catch (error) {
    return threw(p, w, error);
  }
}

/** The answer to what the shared steps made of the delivery. */
function answerFor(p: WebhookDoorDeps, w: WebhookDelivery, ending: Ending): ReceiverResponse {
  w.outcome = outcomeOf(ending);
  switch (ending) {
    case 'handled':
    case 'conflict':
      return answers.ok();
    case 'duplicate':
      return answers.duplicate();
    case 'busy':
      return answers.inProgress();
    case 'invalid':
      return rejected(p, w, answers.invalidPayload(w.problem));
    case 'failed':
      return answers.handlerFailed();
    case 'handoff_failed':
      return answers.handoffFailed();
    case 'store_failed':
      return answers.internal();
  }
}

/** The tenant's secrets (with a `secret` function) and the body (with a reader), then the signature. */
async function readAndVerify(p: WebhookDoorDeps, w: WebhookDelivery): Promise<Reply> {
  const { lookup } = p.config;
  if (lookup) {
    const failed = await findSecrets(p, w, lookup);
    if (failed) return failed;
  }
  if (w.reader) {
    const read = await p.readBody(w.reader);
    if (!(read instanceof Uint8Array)) return read;
    w.body = read;
  }
  return verify(p, w);
}

/** The body within its limit, then the signature (401); a verifier that throws refuses, never a 500. */
function verify(p: WebhookDoorDeps, w: WebhookDelivery): Replied {
  if (bodyTooLarge(w, p.config.maxBodyBytes)) return answers.tooLarge(p.config.maxBodyBytes);
  w.receivedAt = w.checkedAt ?? p.config.now();
  const verifier = w.verify ?? p.config.verify;
  if (!verifier) return decode(p, w);
  // Awaited whether the verifier returns a promise or not: telling them apart saved no instruction
  // the count shows (docs/design.md, "A value, or a promise"). A verifier that throws on malformed
  // input (as Stripe's does on `t=,v1=`) is a 401, never a 500.
  return new Promise<VerifyOutcome>((resolve) => resolve(verifier(signedRequest(p, w)))).then(
    (settled) => verified(p, w, settled),
    (error: unknown) => verified(p, w, verifierThrew(error)),
  );
}

const verifierThrew = (error: unknown) => refuse('no_match', `The verifier threw: ${messageOf(error)}`);

function verified(p: WebhookDoorDeps, w: WebhookDelivery, verdict: VerifyOutcome): Replied {
  if (!verdict.ok) return refuseSignature(p, w, verdict);
  w.deliveryId = verdict.id;
  p.refusals.verified(w.tenant);
  return decode(p, w);
}

/** The body as JSON (400 if it is not), mapped by a contract if the receiver has one, then handled. */
function decode(p: WebhookDoorDeps, w: WebhookDelivery): Replied {
  const decoded = decodeJson(w.text ?? w.body!);
  if (!decoded.ok) return rejected(p, w, answers.invalidJson(decoded.message));
  w.payload = p.config.mapPayload ? p.config.mapPayload(decoded.value, w.headers) : decoded.value;
  if (!p.confirm) return handleDelivery(p, w);
  const hint = { deliveryId: w.deliveryId, type: '', tenant: w.tenant };
  return p.confirm.confirm(
    w.payload,
    hint,
    (confirmed) => handleConfirmed(p, w, confirmed),
    (line) => p.refusals.refused(line),
  );
}

/** Confirm mode: the gateway's answer about the hint's task replaces the body's payload. */
async function handleConfirmed(p: WebhookDoorDeps, w: WebhookDelivery, confirmed: unknown) {
  w.payload = confirmed;
  w.confirmed = true;
  const reply = await handleDelivery(p, w);
  return typeof reply === 'string' ? answerFor(p, w, reply) : reply;
}

/** With an inbox, a live delivery is stored and answered (its handlers run from the inbox); else handled here. */
function handleDelivery(p: WebhookDoorDeps, w: WebhookDelivery): Step | Promise<Reply> {
  return p.inbox && w.live ? store(p, p.inbox, w) : handle(p, w);
}

/** A valid delivery stored in the inbox: 200 once it is durable, 503 when it could not be. */
async function store(p: WebhookDoorDeps, inbox: InboxDoor, w: WebhookDelivery): Promise<Reply> {
  return (await validate(p, w)) ?? inbox.accept(inboxDelivery(w));
}

/** What costs nothing: the method, a body at all, and the checks that need no body. */
function checkRequest(p: WebhookDoorDeps, w: WebhookDelivery): ReceiverResponse | undefined {
  const { input } = w;
  const method = input.method === undefined ? 'POST' : input.method.toUpperCase();
  if (method !== 'POST') return answers.methodNotAllowed();
  if (typeof input.body === 'function') w.reader = input.body;
  // A well-formed string's bytes are made only if something reads them (see bodyBytes).
  else if (typeof input.body === 'string' && isWellFormed(input.body)) w.text = input.body;
  else if ((w.body = rawBytes(input.body)) === undefined) return bodyUnavailable(p, input.framework);
  w.headers = readHeaders(input.headers ?? {});
  const encoded = encodingRefusal(w.headers);
  if (encoded) return encoded;
  // With a `secret` function the checks run before the secrets are looked up, whether or not a
  // body is in hand, so that a prober cannot tell a tenant that exists by a different refusal.
  if (!w.reader && !p.config.lookup) return undefined;
  return checkSignatureHeaders(
    p,
    w,
    p.config.lookup ? p.config.lookup.checkHeaders : p.config.verify?.checkHeaders,
  );
}

/** The verifier's checks that need no body; the verifier is then told they passed. */
function checkSignatureHeaders(
  p: WebhookDoorDeps,
  w: WebhookDelivery,
  check: VerifyFunction['checkHeaders'],
): ReceiverResponse | undefined {
  if (typeof check !== 'function') return undefined;
  w.checkedAt = p.config.now();
  let refusal: VerifyRefusal | undefined;
  try {
    refusal = check({ headers: w.headers, now: w.checkedAt, toleranceSeconds: toleranceOf(p, w) });
  } catch (error) {
    refusal = refuse('no_match', `The verifier's header check threw: ${messageOf(error)}`);
  }
  return refusal ? refuseSignature(p, w, refusal) : undefined;
}

/** A body parser consumed the body first: a mounting mistake, said once and answered every time. */
function bodyUnavailable(p: WebhookDoorDeps, framework: DeliveryInput['framework']): ReceiverResponse {
  if (!p.warnedBodyUnavailable) p.config.logger.error(bodyUnavailableLine(framework));
  p.warnedBodyUnavailable = true;
  return answers.bodyUnavailable();
}

/**
 * The tenant's secrets, from the `secret` function. A tenant that does not exist goes on as if it
 * did, to be refused as a wrong signature once its body was read: a prober learns nothing.
 */
async function findSecrets(
  p: WebhookDoorDeps,
  w: WebhookDelivery,
  lookup: TenantLookup,
): Promise<ReceiverResponse | undefined> {
  try {
    const found = await lookup.find({ headers: w.headers, url: w.input.url }, p.config.bodyTimeoutMs);
    if (found) {
      w.verify = found.verify;
      w.tenant = found.tenant;
    } else w.verify = noSecret;
    return undefined;
  } catch (error) {
    // The sender retries a 500: the secret may be found next time.
    p.config.logger.error(`jobhook: the \`secret\` function failed: ${messageOf(error)}`);
    return answers.internal();
  }
}

const noSecret: VerifyFunction = () => refuse('no_match', 'the `secret` function returned no secret');

/** What the verifier is given: the body, and `headersChecked` when the header checks ran first. */
function signedRequest(p: WebhookDoorDeps, w: WebhookDelivery): SignedRequest {
  const { headers } = w;
  const toleranceSeconds = toleranceOf(p, w);
  const request: SignedRequest =
    w.text !== undefined
      ? new SignedText(w, w.text, headers, w.receivedAt, toleranceSeconds)
      : { headers, body: w.body!, now: w.receivedAt, toleranceSeconds };
  if (w.checkedAt !== undefined) request.headersChecked = true;
  return request;
}

/** A stored delivery is verified again with no timestamp window: its signature is what was checked at arrival. */
function toleranceOf(p: WebhookDoorDeps, w: WebhookDelivery): number {
  return w.live ? p.config.toleranceSeconds : Infinity;
}

/** The body's bytes: as given or read, or the string's UTF-8, made on the first call. */
function bodyBytes(w: WebhookDelivery): Uint8Array {
  return (w.body ??= utf8Bytes(w.text!));
}

/**
 * Whether the body is over `maxBytes`. A string's UTF-8 is at least one byte and at most three per
 * UTF-16 unit, so most strings are judged by their length without encoding them.
 */
function bodyTooLarge(w: WebhookDelivery, maxBytes: number): boolean {
  const { text } = w;
  if (text === undefined || w.body !== undefined) return w.body!.byteLength > maxBytes;
  if (text.length > maxBytes) return true;
  return text.length * 3 > maxBytes && bodyBytes(w).byteLength > maxBytes;
}

/** What the verifier is given for a body handed over as a string: `body` is made only if read. */
class SignedText implements SignedRequest {
  readonly #delivery: WebhookDelivery;
  headersChecked?: boolean;

  constructor(
    delivery: WebhookDelivery,
    readonly text: string,
    readonly headers: HeaderReader,
    readonly now: number,
    readonly toleranceSeconds: number,
  ) {
    this.#delivery = delivery;
  }

  get body(): Uint8Array {
    return bodyBytes(this.#delivery);
  }
}

/** A 401: the sender gets the code's fixed text; the verifier's detail goes to the log only. */
function refuseSignature(p: WebhookDoorDeps, w: WebhookDelivery, refusal: VerifyRefusal): ReceiverResponse {
  if (w.trace) w.trace.refusal = refusal.code;
  const detail = typeof refusal.detail === 'string' ? `: ${refusal.detail}` : '';
  const foreignHeader = refusal.code === 'missing_header' ? foreignSignatureHeader(w.headers) : undefined;
  const foreign = foreignHeader
    ? `; it carries ${foreignHeader}, another family's signature header: run \`jobhook probe\` to learn how the gateway signs`
    : '';
  p.refusals.refused(`jobhook: refused a delivery (401 ${String(refusal.code)})${detail}${foreign}`, {
    code: refusal.code,
    tenant: w.tenant,
    foreignHeader,
  });
  w.outcome = 'invalid';
  keepRefused(p, w, `401 ${String(refusal.code)}${detail}`);
  return answers.invalidSignature(refusalText(refusal.code));
}

/** A 400 for a body or payload that will never pass: logged at warn. */
function rejected(p: WebhookDoorDeps, w: WebhookDelivery, answer: ReceiverResponse): ReceiverResponse {
  p.refusals.refused(`jobhook: rejected a delivery (400): ${answer.body}`);
  w.outcome = 'invalid';
  keepRefused(p, w, `400 ${answer.body}`);
  return answer;
}

/** With an inbox, a refused live delivery whose body was read goes to its quarantine, with the reason. */
function keepRefused(p: WebhookDoorDeps, w: WebhookDelivery, reason: string): void {
  if (!p.inbox || !w.live || (w.body === undefined && w.text === undefined)) return;
  p.inbox.refused(inboxDelivery(w), reason);
}

/** What the inbox keeps of a delivery: its bytes, headers, URL and what was learnt of it. */
function inboxDelivery(w: WebhookDelivery): InboxDelivery {
  return {
    body: bodyBytes(w),
    headers: storedHeaders(w.input.headers ?? {}),
    url: w.input.url,
    receivedAt: w.receivedAt,
    tenant: w.tenant,
    // A payload refused by its schema was never identified: its type is still the payload's own.
    type:
      w.type !== ''
        ? w.type
        : isRecord(w.payload) && typeof w.payload.type === 'string'
          ? w.payload.type
          : undefined,
    deliveryId: w.deliveryId,
  };
}
