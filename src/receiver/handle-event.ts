import { JobhookError } from '../common/errors.js';
import { whenSettled } from '../common/deadline.js';
import { messageOf } from '../common/logging.js';
import type { EventOutcome } from '../events/event-types.js';
import type { EventSchemas } from '../events/schemas.js';
import type { Handoff, HandoffJob } from '../handoff/handoff.js';
import type { JobResultsFeed } from '../results/job-results.js';
import { scopedKey } from '../results/job-result.js';
import type { HeaderReader } from '../wire/headers.js';
import { checkPayload, type CheckedPayload } from './check-payload.js';
import { type Claim, type ClaimTaken, type DeliveryClaims } from './claims.js';
import type { DeliveryInfo, ReportFailures } from './failures.js';
import type { InFlight } from './in-flight.js';
import type { DeliveryTrace } from './observe.js';
import type { ResolvedOptions } from './options.js';
import {
  lateSettledLine,
  runHandlers,
  type DeliverySource,
  type EventHandler,
  type HandlerRun,
} from './run-handlers.js';
import { gateOutcome, outcomeConflict, settleMarks, type OutcomeGate } from './task-outcome.js';

/**
 * How the shared steps end an event. The poll and queued doors read it as an {@link EventOutcome};
 * the webhook door also answers by it, which is why it says why an event failed or did not run:
 * `conflict` (another outcome of its task was handled first), `store_failed` (the dedupe store),
 * `handoff_failed` (the hand-off), `failed` (a handler).
 */
export type Ending =
  'handled' | 'duplicate' | 'conflict' | 'busy' | 'invalid' | 'failed' | 'store_failed' | 'handoff_failed';

/** An ending now, or once what a step waited for (a schema, a store, a handler) settled. */
export type Step = Ending | Promise<Ending>;

const OUTCOMES: Record<Ending, EventOutcome> = {
  handled: 'handled',
  duplicate: 'duplicate',
  conflict: 'duplicate',
  busy: 'busy',
  invalid: 'invalid',
  failed: 'failed',
  store_failed: 'failed',
  handoff_failed: 'failed',
};

/** What became of an event, as the receiver's callers see it. */
export function outcomeOf(ending: Ending): EventOutcome {
  return OUTCOMES[ending];
}

/** What the shared steps need of their receiver. */
export interface HandleDeps {
  config: ResolvedOptions;
  schemas: EventSchemas;
  /** The handlers of a type: its own (for a type with a schema), then the `onAny` ones. */
  handlersFor(this: void, type: string, known: boolean): readonly EventHandler<unknown>[];
  results: JobResultsFeed;
  report: ReportFailures;
  lifecycle: InFlight;
  claims: DeliveryClaims;
  /** Confirm mode: a job outcome's dedupe key is its task's. */
  confirming: boolean;
}

/** The delivery's headers, for a dedupe key of the app's choosing; none for a poll or a queued event. */
const NO_HEADERS: HeaderReader = { get: () => undefined };

/**
 * One event on its way through the shared steps, whichever door it came in by: what the handlers'
 * context is made of, its dedupe claim, and its failures. The webhook door extends it with what it
 * reads off the wire.
 */
export class EventRecord implements DeliveryInfo {
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
  /** The payload's own `id`. */
  payloadId: string | undefined = undefined;
  /** The sender's delivery id (the signed one), else the payload's. */
  deliveryId: string | undefined = undefined;
  headers: HeaderReader = NO_HEADERS;
  attempt: number | undefined = undefined;
  /** A replay with `force`: it runs without the dedupe claim. */
  force = false;
  claim: Claim | undefined = undefined;
  failures: readonly JobhookError[] = [];
  /** Why a payload is invalid: the message of its 400, its log line or its `invalid_job` error. */
  problem = '';
  #info: DeliveryInfo | undefined = undefined;

  constructor(
    readonly source: DeliverySource,
    readonly trace: DeliveryTrace | undefined,
  ) {}

  /** The event as `onError` sees it: made only when a failure is reported. */
  info(): DeliveryInfo {
    return (this.#info ??= { deliveryId: this.deliveryId, type: this.type, tenant: this.tenant });
  }
}

/**
 * Validates the payload, then {@link dispatch}es it. Like the webhook door, it waits only for what
 * answered with a promise (an async schema, a shared store, a handler).
 */
export function handle(p: HandleDeps, d: EventRecord): Step {
  return whenSettled(
    checkPayload(d.payload, p.schemas),
    (checked) => validated(d, checked) ?? dispatch(p, d),
  );
}

/** The payload against its type's schema: `invalid`, or `undefined` with the event identified. */
export async function validate(p: HandleDeps, d: EventRecord): Promise<'invalid' | undefined> {
  return validated(d, await checkPayload(d.payload, p.schemas));
}

function validated(d: EventRecord, checked: CheckedPayload): 'invalid' | undefined {
  if (!checked.ok) return invalid(d, checked.message);
  d.type = checked.type;
  d.event = checked.event;
  d.known = checked.known;
  d.payloadId = checked.payloadId;
  d.deliveryId ??= d.payloadId;
  d.trace?.identified(d.deliveryId, d.type);
  return undefined;
}

/** A payload that will never pass; each door says so its own way. */
export function invalid(d: EventRecord, problem: string): 'invalid' {
  d.problem = problem;
  return 'invalid';
}

/**
 * Records the job result, then hands the event off (with a hand-off) or runs its handlers under
 * its dedupe claim. A result is real once the signature (or the gateway's own answer) proves it:
 * it is recorded before any handler runs, so a wait on the task wakes whichever door it came by.
 */
export function dispatch(p: HandleDeps, d: EventRecord): Step {
  if (d.known) p.results.receive(d.type, d.event, d.receivedAt, d.tenant);
  const { handoff } = p.config;
  if (handoff) return handOff(p, d, handoff);
  return runOnce(p, d, d.force ? undefined : p.config.dedupe);
}

/** A queued event: its hand-off stored it once per key, so it runs with no claim of its own. */
export function dispatchQueued(p: HandleDeps, d: EventRecord): Step {
  if (d.known) p.results.receive(d.type, d.event, d.receivedAt, d.tenant);
  return runOnce(p, d, undefined);
}

type Handlers = readonly EventHandler<unknown>[];

function runOnce(p: HandleDeps, d: EventRecord, store: ResolvedOptions['dedupe'] | undefined): Step {
  const handlers = p.handlersFor(d.type, d.known);
  if (handlers.length === 0) return 'handled';
  const key = store && keyOf(p, d);
  if (!store || key === undefined) return run(p, d, handlers);
  // A store that answers at once (the in-memory one) is not awaited: no turn of the microtask queue.
  return whenSettled(p.claims.take(store, key, d), (taken) => claimed(p, d, handlers, taken));
}

function claimed(p: HandleDeps, d: EventRecord, handlers: Handlers, taken: ClaimTaken): Step {
  d.trace?.claimed(typeof taken === 'object' ? 'new' : taken);
  if (typeof taken !== 'object') return notClaimed(taken);
  d.claim = taken;
  const taskId = jobTaskId(d.type, d.event);
  if (taskId !== undefined) return oneOutcome(p, d, handlers, taken, taskId);
  return run(p, d, handlers);
}

/** The ending of an event whose key is handled, held or unreachable: it does not run now. */
function notClaimed(taken: Exclude<ClaimTaken, Claim>): Ending {
  return taken === 'done' ? 'duplicate' : taken === 'busy' ? 'busy' : 'store_failed';
}

/** One job, one outcome (task-outcome.ts): another outcome handled first for the task is a conflict. */
function oneOutcome(p: HandleDeps, d: EventRecord, handlers: Handlers, claim: Claim, taskId: string): Step {
  const gate = gateOutcome(p.claims, claim.store, { type: d.type, taskId, tenant: d.tenant, delivery: d });
  return whenSettled(gate, (settled) => gated(p, d, handlers, claim, taskId, settled));
}

function gated(
  p: HandleDeps,
  d: EventRecord,
  handlers: Handlers,
  claim: Claim,
  taskId: string,
  gate: OutcomeGate | undefined,
): Step {
  if (!gate) return run(p, d, handlers);
  if (gate.run) {
    return whenSettled(run(p, d, handlers), (ending) =>
      whenSettled(settleMarks(p.claims, gate.marks, d.type, ending === 'handled', d), () => ending),
    );
  }
  d.claim = undefined;
  if (gate.answer !== 'conflict') {
    const ending: Ending = gate.answer === 'busy' ? 'busy' : 'store_failed';
    return whenSettled(p.claims.completeOrRelease(claim, false, d), () => ending);
  }
  if (d.trace) d.trace.conflict = true;
  p.report([outcomeConflict(taskId, d.type, gate.winner, d.deliveryId)], d.info());
  return whenSettled(p.claims.completeOrRelease(claim, true, d), (): Ending => 'conflict');
}

/** Runs the handlers within their time-out, reports their failures, then settles the claim. */
function run(p: HandleDeps, d: EventRecord, handlers: Handlers): Step {
  const started = d.trace ? performance.now() : 0;
  const ran = runHandlers(handlers, d.event, d, p.config.handlerTimeoutMs);
  if (!Array.isArray(ran)) return ranLate(p, d, ran).then(() => ranAll(p, d, started));
  d.failures = ran;
  return ranAll(p, d, started);
}

function ranAll(p: HandleDeps, d: EventRecord, started: number): Step {
  if (d.trace) d.trace.handlerMs = performance.now() - started;
  if (d.failures.length > 0) p.report(d.failures, d.info());
  const ending: Ending = d.failures.length === 0 ? 'handled' : 'failed';
  const settling = d.claim && p.claims.completeOrRelease(d.claim, ending === 'handled', d);
  return settling ? settling.then(() => ending) : ending;
}

/**
 * Waits for handlers that returned promises, within their time-out. Past it the event has failed
 * (the handlers' signal is aborted, the time-out reported); handlers still running keep the claim,
 * renewed, until they settle, and `close()` waits for them.
 */
async function ranLate(p: HandleDeps, d: EventRecord, ran: Promise<HandlerRun>): Promise<void> {
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
 * The event's dedupe key, scoped to its tenant: with `reconcile` or confirm mode, a job outcome's
 * key is its task's, so that the webhook and a poll of the task converge on one key.
 */
function keyOf(p: HandleDeps, d: EventRecord): string | undefined {
  const taskId = p.config.reconcile || p.confirming ? jobTaskId(d.type, d.event) : undefined;
  const choice = p.config.dedupeKey;
  let key: string | undefined;
  if (taskId !== undefined) key = `task:${taskId}`;
  else if (choice === 'event') key = d.payloadId ?? d.deliveryId;
  else if (choice === 'delivery') key = d.deliveryId;
  else {
    const chosen: unknown = choice({
      deliveryId: d.deliveryId,
      type: d.type,
      event: d.event,
      headers: d.headers,
      tenant: d.tenant,
    });
    if (chosen !== undefined && typeof chosen !== 'string') {
      throw new JobhookError('invalid_options', 'dedupeKey returned neither a string nor undefined.');
    }
    key = chosen;
  }
  return key === undefined ? undefined : scopedKey(d.tenant, key);
}

/**
 * Stores the event through the hand-off: `handled` once it is stored, or `handoff_failed` (the
 * sender retries) when it could not be; the failure goes to `onError` as `handoff_failed`.
 */
async function handOff(p: HandleDeps, d: EventRecord, handoff: Handoff): Promise<Ending> {
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
    await handoff.enqueue(job);
  } catch (error) {
    const failure =
      error instanceof JobhookError && error.code === 'handoff_failed'
        ? error
        : new JobhookError('handoff_failed', `The event could not be queued: ${messageOf(error)}`, {
            cause: error,
          });
    d.failures = [failure];
    p.report(d.failures, d.info());
    return 'handoff_failed';
  }
  return 'handled';
}

/** The task id of a job outcome event, `undefined` for any other event. */
export function jobTaskId(type: string, event: unknown): string | undefined {
  if (type !== 'job.completed' && type !== 'job.failed') return undefined;
  const taskId = (event as { data?: { task_id?: unknown } } | null)?.data?.task_id;
  return typeof taskId === 'string' && taskId.length > 0 ? taskId : undefined;
}
