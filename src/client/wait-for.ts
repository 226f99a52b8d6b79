import {
  checkOption,
  invalidOption,
  optionNames,
  positiveNumber,
  refuseUnknownOptions,
} from '../common/errors.js';
import { redactValues, type Redact } from '../common/logging.js';
import type { JobResult } from '../results/job-result.js';
import type { JobResults } from '../results/job-results.js';
import { GatewayError, JobFailedError, WaitTimeoutError } from './errors.js';
import type { RequestOptions } from './request.js';
import { isRetryable } from './retry.js';
import { pollSlots } from './poll-slots.js';
import { timerQueue, type Sleeper } from './timer-queue.js';
import type { ImageTask } from './types.js';

const WHERE = 'waitFor';

/** Options of `client.images.waitFor` and `client.images.generateAndWait`. */
export interface WaitOptions {
  /**
   * A receiver mounted in this app (`createReceiver(...)`): the result is taken from its webhook
   * delivery as soon as it arrives, including one that arrived before the wait began. With a
   * shared `results` channel, deliveries received by other instances wake the wait too.
   */
  receiver?: { readonly results: JobResults };
  /**
   * With a receiver whose `secret` function names tenants: the tenant whose delivery may resolve
   * this wait (a result another tenant's delivery carries never does). Default: the client's
   * `tenant`. Without it, such a receiver's results are not used and the wait polls.
   */
  tenant?: string;
  /**
   * Longest wait, in ms (for `generateAndWait`, counted from the call). Default 600,000 (10 min);
   * `Infinity` for none. Past it the wait rejects with a `WaitTimeoutError`; the job goes on.
   */
  timeoutMs?: number;
  /** Stops the wait (and the submission, for `generateAndWait`): rejects with the signal's reason. */
  signal?: AbortSignal;
  /**
   * First wait between two polls of `images.get`, in ms; each later one is 1.5 times longer, up to
   * `maxPollIntervalMs`. Polling always runs: it resolves the wait when the webhook is lost or
   * went to another instance. Default 1,000 without a receiver, 5,000 with one.
   */
  pollIntervalMs?: number;
  /** Longest wait between two polls, in ms. Default 30,000 (or `pollIntervalMs`, if longer). */
  maxPollIntervalMs?: number;
}

/** A task that ended well: what `waitFor` and `generateAndWait` resolve with. */
export interface CompletedImageTask extends ImageTask {
  status: 'completed';
  image_url: string;
}

/** Polls in flight at once, per client. */
const POLL_SLOTS = 8;
const GROWTH = 1.5;

/** Where a wait starts from: `generateAndWait` has just submitted, so it polls later. */
interface WaitStart {
  /** When the wait's time-out started counting (the submission, for generateAndWait). */
  startedAt: number;
  /** Whether to poll at once (a task submitted earlier may be done) or after one interval. */
  pollAtOnce: boolean;
}

/**
 * The waits of one client: every waiter shares one timer (a {@link timerQueue}) and at most
 * {@link POLL_SLOTS} polls in flight. A waiter holds a timer-queue entry, a watcher on the
 * receiver's results and a listener on its signal only while it waits; it drops all three when it
 * settles, whichever way.
 */
export function waitService(
  get: (taskId: string, options: RequestOptions) => Promise<ImageTask>,
  redact: Redact,
  defaultTenant?: string,
) {
  const timers = timerQueue();
  const slots = pollSlots(POLL_SLOTS);

  function waitFor(
    taskId: string,
    options: WaitOptions = {},
    start: WaitStart = { startedAt: Date.now(), pollAtOnce: true },
  ): Promise<CompletedImageTask> {
    // A throw in the executor (a bad task id or option) rejects the promise.
    return new Promise<CompletedImageTask>((resolve, reject) => {
      if (typeof taskId !== 'string' || taskId.length === 0) {
        throw invalidOption(WHERE, 'taskId', 'the task_id of a submitted job', taskId);
      }
      wait(taskId, resolveWaitOptions(options, defaultTenant), start, resolve, reject);
    });
  }

  function wait(
    taskId: string,
    options: ResolvedWait,
    start: WaitStart,
    resolve: (task: CompletedImageTask) => void,
    reject: (error: unknown) => void,
  ): void {
    const { signal, receiver } = options;
    if (signal?.aborted) return reject(signal.reason);
    const deadline = start.startedAt + options.timeoutMs;
    let interval = options.pollIntervalMs;
    let nextPollAt = start.pollAtOnce ? Date.now() : Date.now() + interval;
    let settled = false;
    let polling = false;
    let cancelQueued: (() => void) | undefined;
    let inFlight: AbortController | undefined;
    let stopWatching: (() => void) | undefined;

    const sleeper: Sleeper = {
      wake() {
        if (Date.now() >= deadline) return fail(new WaitTimeoutError(redact(taskId), options.timeoutMs));
        if (polling) return schedule();
        if (Date.now() >= nextPollAt) {
          polling = true;
          cancelQueued = slots.enqueue(poll);
        }
        schedule();
      },
    };

    function schedule() {
      const at = polling ? deadline : Math.min(nextPollAt, deadline);
      if (Number.isFinite(at)) timers.schedule(sleeper, at);
      else timers.cancel(sleeper);
    }

    async function poll(): Promise<void> {
      cancelQueued = undefined;
      if (settled) return;
      inFlight = new AbortController();
      let delay = interval;
      try {
        // The receiver's reconciler is asking the gateway right now: its answer wakes this wait.
        const reconciling = receiver?.results.polling(taskId, options.tenant);
        if (reconciling) await reconciling;
        else {
          const task = await get(taskId, { signal: inFlight.signal, retries: 0 });
          if (settled) return;
          if (task.status === 'completed') return succeed(task);
          if (task.status === 'failed') return fail(failure(taskId, task, redact));
        }
      } catch (error) {
        if (settled) return;
        // A lost connection, a time-out, 429 or 5xx may pass: the next poll will tell. 4xx will not.
        if (!(error instanceof GatewayError) || !isRetryable(error)) return fail(error);
        // A 429's Retry-After is the gateway asking for a longer pause: honour it.
        if (error.retryAfterSeconds !== undefined) delay = Math.max(delay, error.retryAfterSeconds * 1000);
      } finally {
        inFlight = undefined;
        polling = false;
      }
      nextPollAt = Date.now() + jitter(delay);
      interval = Math.min(options.maxPollIntervalMs, interval * GROWTH);
      schedule();
    }

    function onResult(result: JobResult) {
      stopWatching = undefined; // a watcher is removed once it is called
      if (result.status === 'completed') succeed(result.data as ImageTask);
      else fail(failure(taskId, result.data, redact));
    }

    function onAbort() {
      fail(signal!.reason);
    }

    function cleanUp() {
      settled = true;
      timers.cancel(sleeper);
      cancelQueued?.();
      inFlight?.abort();
      stopWatching?.();
      signal?.removeEventListener('abort', onAbort);
    }

    function succeed(task: ImageTask) {
      if (settled) return;
      cleanUp();
      resolve(task as CompletedImageTask);
    }

    function fail(error: unknown) {
      if (settled) return;
      cleanUp();
      reject(error);
    }

    // A result that came before the wait began (the webhook beat images.generate's answer) is in
    // the receiver's recent results: look there first, then watch for it, in the same turn.
    const recent = receiver?.results.get(taskId, options.tenant);
    if (recent) return onResult(recent);
    stopWatching = receiver?.results.watch(taskId, onResult, options.tenant);
    signal?.addEventListener('abort', onAbort, { once: true });
    schedule();
  }

  return { waitFor };
}

interface ResolvedWait {
  receiver: { readonly results: JobResults } | undefined;
  tenant: string | undefined;
  timeoutMs: number;
  signal: AbortSignal | undefined;
  pollIntervalMs: number;
  maxPollIntervalMs: number;
}

const WAIT_OPTIONS = optionNames<WaitOptions>()([
  'receiver',
  'tenant',
  'timeoutMs',
  'signal',
  'pollIntervalMs',
  'maxPollIntervalMs',
]);

/** Checks and completes the options; throws a JobhookError (`invalid_options`) that names a bad one. */
export function resolveWaitOptions(options: WaitOptions, defaultTenant?: string): ResolvedWait {
  refuseUnknownOptions(options, WAIT_OPTIONS, WHERE, {
    retries: 'it belongs in `createClient({ retries })`',
  });
  const receiver = options.receiver;
  const valid = receiver === undefined || typeof receiver?.results?.watch === 'function';
  checkOption(WHERE, 'receiver', receiver, valid, 'a receiver made by createReceiver');
  const tenant = options.tenant ?? defaultTenant;
  const named = tenant === undefined || (typeof tenant === 'string' && tenant.length > 0);
  checkOption(WHERE, 'tenant', tenant, named, 'the name your `secret` function gives the tenant');
  // Polling is the safety net, so its intervals are finite; the wait as a whole may be endless.
  const ms = { unit: 'ms' };
  const pollIntervalMs = positiveNumber(
    WHERE,
    'pollIntervalMs',
    options.pollIntervalMs,
    receiver ? 5_000 : 1_000,
    ms,
  );
  return {
    receiver,
    tenant,
    timeoutMs: positiveNumber(WHERE, 'timeoutMs', options.timeoutMs, 600_000, { ...ms, infinite: true }),
    signal: options.signal,
    pollIntervalMs,
    maxPollIntervalMs: Math.max(
      pollIntervalMs,
      positiveNumber(WHERE, 'maxPollIntervalMs', options.maxPollIntervalMs, 30_000, ms),
    ),
  };
}

/**
 * The JobFailedError a failed task stands for. Everything in it comes from the gateway (a poll's
 * answer or a webhook delivery), which may quote the API key: all of it is redacted.
 */
function failure(taskId: string, task: Readonly<Record<string, unknown>>, redact: Redact): JobFailedError {
  const reported = redactValues({ ...task }, redact);
  const error = reported.error as { code?: unknown; message?: unknown } | undefined;
  const code = typeof error?.code === 'string' ? error.code : 'job_failed';
  const message =
    typeof error?.message === 'string' ? error.message : 'The gateway reports that the job failed.';
  return new JobFailedError(redact(taskId), { code, message }, reported);
}

/** ±10 %, so that waiters started together do not poll in step. */
function jitter(ms: number): number {
  return ms * (0.9 + Math.random() * 0.2);
}
