import { answers, type ReceiverResponse } from '../wire/answers.js';
import { readBodyWithin } from '../wire/body.js';
import { JobhookError } from '../common/errors.js';
import { messageOf, quote } from '../common/logging.js';
import type { EventOutcome } from '../events/event-types.js';
import type { HandoffJob, QueuedAttempt } from '../handoff/handoff.js';
import { deliveryClaims } from './claims.js';
import { handoffObserver, observeDelivery, onceLogger } from './observe.js';
import type { ResolvedOptions } from './options.js';
import type { DeliveryInput } from './types.js';
import { refusalLog, type SignatureAlarm } from './refusal-log.js';
import type { InboxDoor, StoredRun, StoredRunResult } from './inbox-door.js';
import type { Confirmer } from './confirm.js';
import type { AlarmWitness } from './alarm-witness.js';
import {
  dispatchQueued,
  EventRecord,
  handle,
  outcomeOf,
  validate,
  type Ending,
  type HandleDeps,
} from './handle-event.js';
import { receiveDelivery, WebhookDelivery, type WebhookDoorDeps } from './webhook-door.js';

/**
 * The one path of an event to its handlers, with four doors:
 *
 *   webhook   receive(): a delivery off the wire, checked and answered (webhook-door.ts);
 *   stored    handleStored(): a delivery the inbox kept, checked again (no timestamp window);
 *   poll      handlePolled(): an outcome the reconciler found by polling the gateway;
 *   queued    handleQueued(): an event a hand-off stored, run by a worker;
 *
 * all through the shared steps (handle-event.ts): validate, record the job result, hand off or
 * claim the dedupe key, run the handlers within their time-out, settle the claim. Each door reads
 * their ending its own way: the webhook door answers the sender, the poll door tells the
 * reconciler the outcome, the queued door rejects when a handler failed, so that the queue retries.
 */
export interface Pipeline {
  /** One delivery off the wire, answered. Never rejects. */
  receive(this: void, input: DeliveryInput): Promise<ReceiverResponse>;
  /** An outcome found by polling, as the payload a webhook would carry. Never rejects. */
  handlePolled(this: void, polled: PolledOutcome): Promise<EventOutcome>;
  /** An event a hand-off stored; rejects with the failure when a handler failed or timed out. */
  handleQueued(this: void, job: HandoffJob, attempt?: QueuedAttempt): Promise<void>;
  /** A delivery the inbox kept, from its bytes: what became of it. Never rejects. */
  handleStored(this: void, input: DeliveryInput, run: StoredRun): Promise<StoredRunResult>;
}

export type { EventOutcome };

/** An outcome the reconciler found: the payload a webhook would have carried, and whose task it is. */
export interface PolledOutcome {
  payload: unknown;
  /** The tenant the task was tracked for, if any. */
  tenant?: string | undefined;
}

/** What the pipeline needs of its receiver (createReceiver keeps the registry and the options). */
export interface PipelineDeps extends Omit<HandleDeps, 'claims' | 'confirming'> {
  /** The gateway's counters of the receiver's webhook, which confirm or not a signature alarm. */
  witness?: AlarmWitness | undefined;
  /** A webhook's job outcome was handled (or handed off, or had been handled): its task needs no poll. */
  webhookSettled?: ((taskId: string, tenant: string | undefined) => void) | undefined;
  /** With `inbox`: where a verified delivery is stored before its answer, and a refused one kept. */
  inbox?: InboxDoor | undefined;
  /** Confirm mode: each delivery is a hint, and the gateway's answer is the payload handled. */
  confirm?: Confirmer | undefined;
}

export function createPipeline(deps: PipelineDeps): Pipeline {
  const { config, lifecycle } = deps;
  const observerFailed = onceLogger(config.logger);
  const unexpected = (error: unknown): ReceiverResponse => {
    config.logger.error(`jobhook: unexpected failure while handling an event: ${messageOf(error)}`);
    return answers.internal();
  };
  const p: WebhookDoorDeps = {
    config,
    schemas: deps.schemas,
    handlersFor: deps.handlersFor,
    results: deps.results,
    report: deps.report,
    lifecycle,
    claims: deliveryClaims(config.logger, lifecycle, deps.report),
    confirming: deps.confirm !== undefined,
    refusals: refusalLog(
      config.logger,
      config.now,
      signaturesFailing(config, observerFailed),
      deps.witness,
      (work) => lifecycle.track(work),
    ),
    readBody: readBodyWithin(config.maxBodyBytes, config.bodyTimeoutMs),
    inbox: deps.inbox,
    confirm: deps.confirm,
    webhookSettled: deps.webhookSettled,
    unexpected,
    warnedBodyUnavailable: false,
  };
  const startedFirst = handoffObserver(config.observer, observerFailed);

  function receive(input: DeliveryInput): Promise<ReceiverResponse> {
    if (lifecycle.closing) return Promise.resolve(answers.shuttingDown());
    const { observer } = config;
    if (!observer) return receiveDelivery(p, new WebhookDelivery('webhook', undefined, input, true));
    return observeDelivery(observer, observerFailed, (trace) =>
      receiveDelivery(p, new WebhookDelivery('webhook', trace, input, true)),
    );
  }

  async function handleStored(input: DeliveryInput, run: StoredRun): Promise<StoredRunResult> {
    if (lifecycle.closing) return { outcome: 'failed', answer: answers.shuttingDown() };
    const w = new WebhookDelivery(run.source, undefined, input, false);
    w.attempt = run.attempt;
    w.force = run.force === true;
    const answer = await receiveDelivery(p, w);
    return { outcome: w.outcome ?? 'failed', answer };
  }

  let warnedUntenanted = false;
  async function handlePolled(polled: PolledOutcome): Promise<EventOutcome> {
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
    const d = new EventRecord('poll', undefined);
    d.payload = polled.payload;
    d.confirmed = true;
    // A receiver with one secret has no tenants, whatever the tracker says.
    d.tenant = config.lookup ? polled.tenant : undefined;
    d.receivedAt = config.now();
    lifecycle.enter();
    try {
      const ending = await handle(p, d);
      if (ending === 'invalid') config.logger.warn(`jobhook: refused a polled outcome (400): ${d.problem}`);
      return outcomeOf(ending);
    } catch (error) {
      unexpected(error);
      return 'failed';
    } finally {
      lifecycle.leave();
    }
  }

  async function handleQueued(job: HandoffJob, attempt?: QueuedAttempt): Promise<void> {
    if (!isHandoffJob(job)) {
      throw new JobhookError(
        'invalid_job',
        'handleQueued takes a job a hand-off stored: { key, type, deliveryId, payload, receivedAt }.',
      );
    }
    const d = new EventRecord(job.source === 'poll' ? 'poll' : 'webhook', undefined);
    d.payload = job.payload;
    d.tenant = typeof job.tenant === 'string' ? job.tenant : undefined;
    d.confirmed = job.confirmed === true || job.source === 'poll';
    d.deliveryId = job.deliveryId ?? undefined;
    d.attempt = attempt?.attempt;
    d.receivedAt = typeof job.receivedAt === 'number' ? job.receivedAt : config.now();
    // The time from hand-off to first start; a retry's start would count its back-off too.
    if (d.attempt === 1) {
      startedFirst?.({
        deliveryId: d.deliveryId,
        type: job.type,
        latencyMs: Math.max(0, Date.now() - d.receivedAt),
      });
    }
    lifecycle.enter();
    let ending: Ending;
    try {
      ending = (await validate(p, d)) ?? (d.type === job.type ? await dispatchQueued(p, d) : 'invalid');
    } finally {
      lifecycle.leave();
    }
    if (ending === 'handled') return;
    if (ending === 'invalid') throw invalidJob(p, d, job);
    throw d.failures[0] ?? new JobhookError('handler_failed', `The queued ${d.type} event failed.`);
  }

  return { receive, handlePolled, handleQueued, handleStored };
}

/** A queued job whose payload will never pass, or is of another type than the job: reported, then thrown. */
function invalidJob(p: WebhookDoorDeps, d: EventRecord, job: HandoffJob): JobhookError {
  const problem = d.problem !== '' ? d.problem : `its payload is of type ${quote(d.type)}`;
  d.type = job.type;
  const error = new JobhookError(
    'invalid_job',
    `The queued ${job.type} event ${quote(job.key)}: ${problem}`,
    {
      deliveryId: d.deliveryId,
      eventType: job.type,
    },
  );
  d.failures = [error];
  p.report(d.failures, d.info());
  return error;
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
      observer.signaturesFailing?.(alarm);
    } catch (error) {
      warnOnce(`jobhook: the receiver's observer failed in signaturesFailing(): ${messageOf(error)}`);
    }
  };
}
