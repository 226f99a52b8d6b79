import type { ReconcileObserver } from '../reconcile/options.js';
import type { AnswerCode, ReceiverResponse } from '../wire/answers.js';
import type { RefusalCode } from '../signatures/verifier.js';
import { messageOf, type Logger } from '../common/logging.js';
import type { SignatureAlarm } from './refusal-log.js';

/**
 * What became of a delivery, from its answer: 2xx `ok`, `duplicate` or `conflict` (another outcome
 * of its task was handled first: not run), 409 `in_progress`, 401 `refused`, other 4xx `rejected`, 5xx `failed`.
 */
export type DeliveryOutcome =
  'ok' | 'duplicate' | 'conflict' | 'in_progress' | 'refused' | 'rejected' | 'failed';

/** Whether the dedupe store saw the delivery's key for the first time, as handled, or as claimed. */
export type DedupeOutcome = 'new' | 'duplicate' | 'in_progress';

/** A delivery as an observer sees it once answered: no secret, signature, header or body. */
export interface ObservedDelivery {
  /** See {@link DeliveryOutcome}. */
  outcome: DeliveryOutcome;
  /** The answer's HTTP status. */
  status: number;
  /** The answer's `error.code` (`invalid_signature`, `handler_failed`, …); `undefined` on 2xx. */
  code: AnswerCode | undefined;
  /** Why a 401 refused the delivery: `missing_header`, `malformed_header`, `stale_timestamp`, `no_match`. */
  refusal: RefusalCode | undefined;
  /** The delivery id, once the signature passed and the payload parsed. */
  deliveryId: string | undefined;
  /** The event type, once the signature passed and the payload parsed. */
  type: string | undefined;
  /** What the dedupe store said; `undefined` when the handlers ran without dedupe, or never got that far. */
  dedupe: DedupeOutcome | undefined;
  /** How long the handlers ran until the answer, in ms; `undefined` when they did not run. */
  handlerMs: number | undefined;
  /** From the call to `receive()` to its answer, in ms. */
  durationMs: number;
}

/** A delivery that a queue worker took up after the receiver handed it off. */
export interface ObservedHandoff {
  /** The delivery id. */
  deliveryId: string | undefined;
  /** The event type. */
  type: string;
  /** From the moment the receiver enqueued it to the moment a worker started it, in ms. */
  latencyMs: number;
}

/**
 * Sees every delivery (`createReceiver({ observer })`; `otelObserver()` is one). A method that
 * throws is logged once and never changes an answer.
 *
 * @typeParam State - What `start` returns (a span, say), given back to `within` and `end`.
 */
export interface ReceiverObserver<State = unknown> extends ReconcileObserver {
  /** A delivery arrived: called synchronously, in the HTTP request's async context. */
  start(): State;
  /** Runs the rest of the delivery, say with its span active, and returns what `work` returns. */
  within?<T>(state: State, work: () => T): T;
  /** The delivery was answered, with what {@link ObservedDelivery} says. Called once per `start()`. */
  end(state: State, delivery: ObservedDelivery): void;
  /** A queue worker took up a delivery the receiver had handed off (see `jobhook/bullmq`). */
  handoff?(handoff: ObservedHandoff): void;
  /** Deliveries keep arriving and none verifies (10 in a row, then every 5 min): wire it to alerting. */
  signaturesFailing?(alarm: SignatureAlarm): void;
}

/** What the pipeline learns about an observed delivery (none is made without an observer). */
export class DeliveryTrace {
  deliveryId: string | undefined = undefined;
  type: string | undefined = undefined;
  refusal: RefusalCode | undefined = undefined;
  dedupe: DedupeOutcome | undefined = undefined;
  handlerMs: number | undefined = undefined;
  /** Another outcome of the event's task had been handled: it did not run. */
  conflict = false;

  /** The delivery passed its signature and schema checks. */
  identified(deliveryId: string | undefined, type: string): void {
    this.deliveryId = deliveryId;
    this.type = type;
  }

  /** What the dedupe store's claim said. */
  claimed(claim: unknown): void {
    this.dedupe =
      claim === 'new' ? 'new' : claim === 'done' ? 'duplicate' : claim === 'busy' ? 'in_progress' : undefined;
  }
}

/** Receives one delivery under `observer`: `start()` before, `within()` around, `end()` after. */
export function observeDelivery(
  observer: ReceiverObserver,
  warnOnce: (message: string) => void,
  receive: (trace: DeliveryTrace) => Promise<ReceiverResponse>,
): Promise<ReceiverResponse> {
  const started = performance.now();
  const trace = new DeliveryTrace();
  let state: unknown;
  try {
    state = observer.start();
  } catch (error) {
    warnOnce(`jobhook: the receiver's observer failed in start(): ${messageOf(error)}`);
    return receive(trace);
  }
  let running: Promise<ReceiverResponse> | undefined;
  const work = () => (running = receive(trace));
  const end = (response: ReceiverResponse) => {
    try {
      observer.end(state, summarize(response, trace, performance.now() - started));
    } catch (error) {
      warnOnce(`jobhook: the receiver's observer failed in end(): ${messageOf(error)}`);
    }
    return response;
  };
  const withinFailed = (error: unknown) => {
    warnOnce(`jobhook: the receiver's observer failed in within(): ${messageOf(error)}`);
    return (running ?? work()).then(end);
  };
  try {
    const answered = observer.within ? observer.within(state, work) : work();
    return Promise.resolve(answered).then(end, withinFailed);
  } catch (error) {
    return withinFailed(error);
  }
}

/** The observer's `handoff()` made safe to call, or `undefined` without one. */
export function handoffObserver(
  observer: ReceiverObserver | undefined,
  warnOnce: (message: string) => void,
): ((handoff: ObservedHandoff) => void) | undefined {
  if (!observer?.handoff) return undefined;
  return (handoff) => {
    try {
      observer.handoff!(handoff);
    } catch (error) {
      warnOnce(`jobhook: the receiver's observer failed in handoff(): ${messageOf(error)}`);
    }
  };
}

/** A logger's `error`, called for the first message only: a broken observer repeats on every delivery. */
export function onceLogger(logger: Logger): (message: string) => void {
  let said = false;
  return (message) => {
    if (said) return;
    said = true;
    logger.error(message);
  };
}

function summarize(response: ReceiverResponse, trace: DeliveryTrace, durationMs: number): ObservedDelivery {
  const { status } = response;
  const code = status >= 200 && status < 300 ? undefined : answerCodeOf(response.body);
  const { dedupe } = trace;
  return {
    outcome: trace.conflict && status < 300 ? 'conflict' : deliveryOutcomeOf(status, dedupe),
    status,
    code,
    refusal: status === 401 ? trace.refusal : undefined,
    deliveryId: trace.deliveryId,
    type: trace.type,
    dedupe,
    handlerMs: trace.handlerMs,
    durationMs,
  };
}

function deliveryOutcomeOf(status: number, dedupe: DedupeOutcome | undefined): DeliveryOutcome {
  if (status >= 200 && status < 300) return dedupe === 'duplicate' ? 'duplicate' : 'ok';
  if (status === 409 && dedupe === 'in_progress') return 'in_progress';
  if (status === 401) return 'refused';
  return status >= 400 && status < 500 ? 'rejected' : 'failed';
}

/** The `error.code` of one of jobhook's own answers (see src/wire/answers.ts). */
function answerCodeOf(body: string): AnswerCode | undefined {
  try {
    const parsed = JSON.parse(body) as { error?: { code?: unknown } };
    return typeof parsed.error?.code === 'string' ? (parsed.error.code as AnswerCode) : undefined;
  } catch {
    return undefined;
  }
}
