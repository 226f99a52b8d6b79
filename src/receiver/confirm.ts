import { answers, type ReceiverResponse } from '../wire/answers.js';
import { JobhookError } from '../common/errors.js';
import { isRecord } from '../common/values.js';
import { ignore, messageOf, quote, type SafeLogger } from '../common/logging.js';
import { checkOption, optionNames, positiveNumber, refuseUnknownOptions } from '../common/option-checks.js';
import { scopedKey } from '../results/job-result.js';
import type { JobResultsFeed } from '../results/job-results.js';
import { JOB_TRACKER, type JobTracker } from '../tracker/job-tracker.js';
import { polledEvent } from '../reconcile/reconciler.js';
import { rateLimitOf, statusOf, MAX_RATE_LIMIT_PAUSE_MS } from '../reconcile/gateway.js';
import type { ReconcileClient } from '../reconcile/options.js';
import { refusalText } from '../signatures/verifier.js';
import type { DeliveryInfo, ReportFailures } from './failures.js';

/**
 * Confirm mode: each delivery is a hint that a task ended. The task id is read from it, the
 * gateway is asked (GET /api/v1/images/{task_id}) and the handlers get the gateway's answer, never
 * the body's. One GET per task at a time is shared by every hint, wait and reconciler poll of it.
 */

/** `createReceiver({ confirm })`: take each delivery as a hint and confirm its task with the gateway. */
export interface ConfirmOptions {
  /** A client from `jobhook/client` (`createClient`): the task GETs go through it. */
  client: ConfirmClient;
  /**
   * The tracker your submitting clients record tasks in (`createClient({ jobs })`): a hint for a
   * task it does not know is refused without a GET. Default: `reconcile.jobs`, when it has `has()`.
   */
  jobs?: JobTracker;
  /** Without a tracker: most GETs a minute for hinted tasks, past which hints are answered 503. Default 60; `Infinity`: no limit. */
  lookupsPerMinute?: number;
}

/** What confirm mode calls on the gateway: a client from `jobhook/client` has it. */
export interface ConfirmClient {
  images: ReconcileClient['images'];
}

export interface ResolvedConfirm {
  client: ConfirmClient;
  jobs: JobTracker | undefined;
  lookupsPerMinute: number;
}

const WHERE = 'createReceiver';
const CONFIRM_OPTIONS = optionNames<ConfirmOptions>()(['client', 'jobs', 'lookupsPerMinute']);

/** `confirm`, checked; `reconcileJobs`: the reconciler's tracker, the default one. */
export function resolveConfirm(
  options: ConfirmOptions,
  reconcileJobs: JobTracker | undefined,
): ResolvedConfirm {
  const valid = typeof options === 'object' && options !== null;
  checkOption(WHERE, 'confirm', options, valid, 'an object such as { client }');
  refuseUnknownOptions(options, CONFIRM_OPTIONS, 'createReceiver({ confirm })');
  const { client, jobs } = options;
  const gateway = typeof client?.images?.get === 'function';
  checkOption(
    WHERE,
    'confirm.client',
    client,
    gateway,
    'a gateway client: createClient({ baseUrl, apiKey })',
  );
  const knows = (tracker: JobTracker | undefined) => typeof tracker?.has === 'function';
  const tracker = jobs === undefined || knows(jobs);
  checkOption(WHERE, 'confirm.jobs', jobs, tracker, `${JOB_TRACKER}, which has has()`);
  return {
    client,
    jobs: jobs ?? (knows(reconcileJobs) ? reconcileJobs : undefined),
    lookupsPerMinute: positiveNumber(WHERE, 'confirm.lookupsPerMinute', options.lookupsPerMinute, 60, {
      infinite: true,
    }),
  };
}

/** An answer now, or once what it waited for settled. */
type Answer = ReceiverResponse | Promise<ReceiverResponse>;

/** Writes a refusal's line, as the receiver's refusal log does (a stranger cannot flood the log). */
export type RefusedLine = (line: string) => void;

/** Runs a confirmed payload (the gateway's task as the event a webhook would carry) through the pipeline. */
export type RunConfirmed = (payload: unknown) => Answer;

export interface Confirmer {
  /** The hint's task confirmed with the gateway, then `run` with the gateway's payload; or why not. */
  confirm(
    this: void,
    hint: unknown,
    info: DeliveryInfo,
    run: RunConfirmed,
    refused: RefusedLine,
  ): Promise<ReceiverResponse>;
  /** The task's GET, shared with any in flight for it: what the reconciler polls with. */
  lookup(this: void, taskId: string, tenant: string | undefined, signal?: AbortSignal): Promise<unknown>;
  /** The task's outcome was handled (by any door): its hints need no GET. */
  handled(this: void, taskId: string, tenant: string | undefined): void;
  /** Whether the task's outcome was handled in this process lately. */
  isHandled(this: void, taskId: string, tenant: string | undefined): boolean;
}

/** Tasks remembered as handled, the latest ones; an older task's hint costs one GET, then a duplicate. */
const MAX_HANDLED = 10_000;
/** Retry-After of a 503 whose cause gave none, in seconds. */
const RETRY_SECONDS = 10;
/** Each GET is bounded: a hint waits for it while the sender waits for the answer. */
const LOOKUP_TIMEOUT_MS = 10_000;

export function createConfirmer(deps: {
  options: ResolvedConfirm;
  /** The reconciler's tracker, with `reconcile`: a task still running is tracked in it. */
  reconcileJobs: JobTracker | undefined;
  results: JobResultsFeed;
  report: ReportFailures;
  logger: SafeLogger;
  now: () => number;
}): Confirmer {
  const { options, results, logger, now } = deps;
  const { client, jobs } = options;
  const flights = new Map<string, Promise<unknown>>();
  const handling = new Map<string, Promise<ReceiverResponse>>();
  const handledKeys = new Set<string>();
  const reportedKeys = new Set<string>();
  const limit = lookupLimit(options.lookupsPerMinute, now);
  const warned = new Set<string>();
  const warnOnce = (kind: string, message: string) => {
    if (warned.has(kind)) return;
    warned.add(kind);
    logger.warn(message);
  };

  function lookup(taskId: string, tenant: string | undefined, signal?: AbortSignal): Promise<unknown> {
    const key = scopedKey(tenant, taskId);
    let flight = flights.get(key);
    if (!flight) {
      flight = client.images.get(taskId, { retries: 0, timeoutMs: LOOKUP_TIMEOUT_MS });
      const started = flight;
      const done = () => {
        if (flights.get(key) === started) flights.delete(key);
      };
      started.then(done, done);
      flights.set(key, started);
      // A wait on the task joins this GET rather than making its own.
      results.notePoll(taskId, tenant, started.then(ignore));
    }
    return signal ? abortable(flight, signal) : flight;
  }

  function handled(taskId: string, tenant: string | undefined): void {
    remember(handledKeys, scopedKey(tenant, taskId));
  }

  async function confirm(
    hint: unknown,
    info: DeliveryInfo,
    run: RunConfirmed,
    refused: RefusedLine,
  ): Promise<ReceiverResponse> {
    const taskId = taskIdOf(hint);
    if (taskId === undefined) {
      refused('jobhook: refused a delivery (400): confirm mode found no task id (`data.task_id`) in it.');
      return answers.invalidPayload(
        'The delivery names no task id (data.task_id) to confirm with the gateway.',
      );
    }
    const { tenant } = info;
    const key = scopedKey(tenant, taskId);
    if (handledKeys.has(key)) return answers.duplicate();
    const before = handling.get(key);
    if (before) return follow(await before);
    if (!flights.has(key)) {
      const refusal = await mayAsk(taskId, tenant, refused);
      if (refusal) return refusal;
    }
    let task: unknown;
    try {
      task = await lookup(taskId, tenant);
    } catch (error) {
      return lookupFailed(taskId, error, refused);
    }
    if (handledKeys.has(key)) return answers.duplicate();
    const other = handling.get(key);
    if (other) return follow(await other);
    if (!isRecord(task)) {
      warnOnce(
        'record',
        `jobhook: the gateway answered no task record for task ${quote(taskId)}; the hint waits.`,
      );
      return answers.unconfirmed(RETRY_SECONDS);
    }
    const event = polledEvent(taskId, task, now());
    if (!event) return stillRunning(taskId, tenant);
    reportMismatch(key, hint, event.payload.data, info);
    const answer = Promise.resolve(run(event.payload));
    handling.set(key, answer);
    try {
      const settled = await answer;
      if (settled.status < 300) {
        handled(taskId, tenant);
        await forget(taskId, tenant);
      }
      return settled;
    } finally {
      if (handling.get(key) === answer) handling.delete(key);
    }
  }

  /** Without a reconciler (which settles what it tracks), the tracker forgets a handled task: it would grow. */
  async function forget(taskId: string, tenant: string | undefined): Promise<void> {
    if (!jobs || deps.reconcileJobs) return;
    try {
      await (tenant === undefined ? jobs.settle(taskId) : jobs.settle(taskId, tenant));
    } catch (error) {
      warnOnce('tracker', `jobhook: the job tracker failed to forget a confirmed task: ${messageOf(error)}`);
    }
  }

  /** Whether this hint may cost a GET: a tracker's task, or within the limit; else the answer. */
  async function mayAsk(
    taskId: string,
    tenant: string | undefined,
    refused: RefusedLine,
  ): Promise<ReceiverResponse | undefined> {
    if (!jobs) {
      const waitSeconds = limit();
      if (waitSeconds === 0) return undefined;
      warnOnce(
        'limit',
        `jobhook: confirm mode reached its ${options.lookupsPerMinute} GETs a minute for hinted tasks: hints are ` +
          'answered 503 until it refills. Pass confirm.jobs (the tracker your clients record tasks in) to ask only about your own tasks.',
      );
      return answers.unconfirmed(waitSeconds);
    }
    let known: boolean;
    try {
      known = await jobs.has!(taskId, tenant);
    } catch (error) {
      warnOnce('tracker', `jobhook: the job tracker failed to look a hinted task up: ${messageOf(error)}`);
      return answers.unconfirmed(RETRY_SECONDS);
    }
    if (known) return undefined;
    // Answered as a wrong signature is: a stranger learns nothing from the refusal.
    refused(`jobhook: refused a delivery (401): its task ${quote(taskId)} is not one the job tracker knows.`);
    return answers.invalidSignature(refusalText('no_match'));
  }

  function lookupFailed(taskId: string, error: unknown, refused: RefusedLine): ReceiverResponse {
    const status = statusOf(error);
    if (status === 404) {
      refused(`jobhook: refused a delivery (401): the gateway knows no task ${quote(taskId)} (404).`);
      return answers.invalidSignature(refusalText('no_match'));
    }
    const limited = rateLimitOf(error);
    const retryAfterMs =
      limited?.retryAfterMs ?? Math.min(MAX_RATE_LIMIT_PAUSE_MS, retryAfterOf(error) * 1000);
    warnOnce(
      `get-${status}`,
      `jobhook: confirm mode could not ask the gateway about task ${quote(taskId)} (answered 503, the ` +
        `gateway retries): ${messageOf(error)}`,
    );
    return answers.unconfirmed(retryAfterMs / 1000);
  }

  /** A task that has not ended: tracked for the reconciler (2xx), or the hint is retried (503). */
  async function stillRunning(taskId: string, tenant: string | undefined): Promise<ReceiverResponse> {
    const tracker = deps.reconcileJobs;
    if (!tracker) return answers.unconfirmed(RETRY_SECONDS * 3);
    try {
      await (tenant === undefined ? tracker.track(taskId) : tracker.track(taskId, undefined, tenant));
    } catch (error) {
      warnOnce('tracker', `jobhook: the job tracker failed to track a hinted task: ${messageOf(error)}`);
      return answers.unconfirmed(RETRY_SECONDS);
    }
    return answers.ok();
  }

  /** A hint that said otherwise than the gateway: reported once per task, then handled as the gateway says. */
  function reportMismatch(
    key: string,
    hint: unknown,
    truth: Record<string, unknown>,
    info: DeliveryInfo,
  ): void {
    const said = isRecord(hint) ? hint : {};
    const data = isRecord(said.data) ? said.data : {};
    const type = truth.status === 'completed' ? 'job.completed' : 'job.failed';
    const differs: string[] = [];
    if (typeof said.type === 'string' && said.type !== type)
      differs.push(`type ${quote(said.type)}, not ${quote(type)}`);
    if (typeof data.image_url === 'string' && data.image_url !== truth.image_url)
      differs.push('another image_url');
    if (differs.length === 0 || reportedKeys.has(key)) return;
    remember(reportedKeys, key);
    const error = new JobhookError(
      'confirm_mismatch',
      `A delivery for task ${quote(String(truth.task_id))} disagreed with the gateway (${differs.join(', ')}): ` +
        "the handlers ran with the gateway's values.",
      { deliveryId: info.deliveryId, eventType: type },
    );
    deps.report([error], { ...info, type });
  }

  const isHandled = (taskId: string, tenant: string | undefined) =>
    handledKeys.has(scopedKey(tenant, taskId));
  return { confirm, lookup, handled, isHandled };
}

/** A follower of a hint being handled: a duplicate once it was, else the same answer. */
function follow(answer: ReceiverResponse): ReceiverResponse {
  return answer.status < 300 ? answers.duplicate() : answer;
}

function taskIdOf(hint: unknown): string | undefined {
  const data = isRecord(hint) ? hint.data : undefined;
  const taskId = isRecord(data) ? data.task_id : undefined;
  return typeof taskId === 'string' && taskId.length > 0 && taskId.length <= 200 ? taskId : undefined;
}

function retryAfterOf(error: unknown): number {
  const seconds = (error as { retryAfterSeconds?: unknown } | null | undefined)?.retryAfterSeconds;
  return typeof seconds === 'number' && seconds >= 0 ? seconds : RETRY_SECONDS;
}

/** Adds `key` to a bounded set: past its size, the oldest goes. */
function remember(keys: Set<string>, key: string): void {
  keys.delete(key);
  keys.add(key);
  if (keys.size > MAX_HANDLED) keys.delete(keys.values().next().value!);
}

/** A token bucket of `perMinute` GETs: 0 when one may be made now, else the seconds until one may. */
function lookupLimit(perMinute: number, now: () => number): () => number {
  if (!Number.isFinite(perMinute)) return () => 0;
  let tokens = perMinute;
  let at = now();
  return () => {
    const t = now();
    tokens = Math.min(perMinute, tokens + ((t - at) / 60_000) * perMinute);
    at = t;
    if (tokens >= 1) {
      tokens -= 1;
      return 0;
    }
    return ((1 - tokens) / perMinute) * 60;
  };
}

/** `flight` for one caller, which stops waiting (not the shared GET) when its signal aborts. */
function abortable<T>(flight: Promise<T>, signal: AbortSignal): Promise<T> {
  if (signal.aborted) return Promise.reject(signal.reason as Error);
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(signal.reason as Error);
    signal.addEventListener('abort', onAbort, { once: true });
    flight.then(resolve, reject).finally(() => signal.removeEventListener('abort', onAbort));
  });
}
