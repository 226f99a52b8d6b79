import { backoffDelay } from '../common/backoff.js';
import { IndexedHeap } from '../common/structures.js';
import {
  checkOption,
  invalidOption,
  optionNames,
  positiveNumber,
  refuseUnknownOptions,
} from '../common/option-checks.js';
import { redactValues, type Redact } from '../common/logging.js';
import { withGetters } from '../common/structures.js';
import type { JobResult } from '../results/job-result.js';
import type { JobResults } from '../results/job-results.js';
import { GatewayError, JobFailedError, WaitTimeoutError } from './errors.js';
import type { RequestOptions } from './request.js';
import { isRetryable } from './retry.js';
import type { ImageTask } from './types.js';

const WHERE = 'waitFor';

/** Options of `client.images.waitFor` and `client.images.generateAndWait`. */
export interface WaitOptions {
  /** A receiver in this app: its webhook deliveries resolve the wait, even one that came before it. */
  receiver?: { readonly results: JobResults };
  /** The tenant whose deliveries may resolve this wait. Default: the client's `tenant`. */
  tenant?: string;
  /** Longest wait, in ms, then a `WaitTimeoutError` (the job goes on). Default 600,000; `Infinity`: none. */
  timeoutMs?: number;
  /** Stops the wait (and the submission, for `generateAndWait`): rejects with the signal's reason. */
  signal?: AbortSignal;
  /** First pause between polls, in ms, growing 1.5 times each time. Default 1,000; 5,000 with a receiver. */
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

/** `generateAndWait` has just submitted: its time-out started then, and it polls one interval later. */
interface WaitStart {
  startedAt: number;
  pollAtOnce: boolean;
}

/** The waits of one client: one shared timer ({@link timerQueue}) and {@link POLL_SLOTS} polls in flight. */
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
    const backoff = {
      firstMs: options.pollIntervalMs,
      maxMs: options.maxPollIntervalMs,
      factor: 1.5,
      jitter: 0.1, // so that waiters started together do not poll in step
    };
    let polls = 0;
    let nextPollAt = start.pollAtOnce ? Date.now() : Date.now() + options.pollIntervalMs;
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
      let delay = backoffDelay(backoff, ++polls);
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
        if (!(error instanceof GatewayError) || !isRetryable(error)) return fail(error);
        if (error.retryAfterSeconds !== undefined) delay = Math.max(delay, error.retryAfterSeconds * 1000);
      } finally {
        inFlight = undefined;
        polling = false;
      }
      nextPollAt = Date.now() + delay;
      schedule();
    }

    function onResult(result: JobResult) {
      stopWatching = undefined; // a watcher is removed once called
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

    // The webhook may have beaten images.generate's answer: look first, then watch, in one turn.
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

/** Checks and completes the options; a bad one throws `invalid_options` naming it. */
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

/** The JobFailedError of a failed task, redacted: all of it comes from the gateway. */
function failure(taskId: string, task: Readonly<Record<string, unknown>>, redact: Redact): JobFailedError {
  const reported = redactValues({ ...task }, redact);
  const error = reported.error as { code?: unknown; message?: unknown } | undefined;
  const code = typeof error?.code === 'string' ? error.code : 'job_failed';
  const message =
    typeof error?.message === 'string' ? error.message : 'The gateway reports that the job failed.';
  return new JobFailedError(redact(taskId), { code, message }, reported);
}

/** At most `limit` polls in flight, the rest queued: a thousand waits never open a thousand connections. */
function pollSlots(limit: number) {
  let running = 0;
  const queued = new Set<() => Promise<void>>();

  function next() {
    for (const start of queued) {
      if (running >= limit) return;
      queued.delete(start);
      running++;
      void start().finally(() => {
        running--;
        next();
      });
    }
  }

  return {
    /** Runs `start` (which never rejects) when a slot is free; returns the cancel. */
    enqueue(start: () => Promise<void>): () => void {
      queued.add(start);
      next();
      return () => void queued.delete(start);
    },
  };
}

/** Something a {@link timerQueue} wakes at a time. */
interface Sleeper {
  wake(): void;
}

/** setTimeout's longest delay; a later wake-up is reached in steps. */
const MAX_DELAY_MS = 2 ** 31 - 1;

interface WakeUp {
  sleeper: Sleeper;
  at: number;
  place: number;
}

/** Many wake-ups on one timer: a heap by time and one setTimeout for the earliest; idle, it holds none. */
export function timerQueue(now: () => number = Date.now) {
  const heap = new IndexedHeap<WakeUp>((a, b) => a.at < b.at, {
    get: (wakeUp) => wakeUp.place,
    set: (wakeUp, place) => void (wakeUp.place = place),
  });
  const live = new Map<Sleeper, WakeUp>();
  let timer: ReturnType<typeof setTimeout> | undefined;
  let timerAt = Infinity;

  function arm() {
    const first = heap.peek();
    if (!first) return disarm();
    if (timer !== undefined && timerAt <= first.at) return;
    disarm();
    timerAt = first.at;
    timer = setTimeout(fire, Math.min(MAX_DELAY_MS, Math.max(0, first.at - now())));
  }

  function disarm() {
    if (timer !== undefined) clearTimeout(timer);
    timer = undefined;
    timerAt = Infinity;
  }

  function fire() {
    timer = undefined;
    timerAt = Infinity;
    const due = now();
    const woken: Sleeper[] = [];
    for (let first = heap.peek(); first && first.at <= due; first = heap.peek()) {
      heap.pop();
      live.delete(first.sleeper);
      woken.push(first.sleeper);
    }
    // Wake after the heap is consistent: a sleeper may schedule itself again from wake().
    for (const sleeper of woken) sleeper.wake();
    arm();
  }

  const queue = {
    /** Wakes `sleeper` at `at` (the queue's clock), replacing any wake-up it had. */
    schedule(sleeper: Sleeper, at: number): void {
      const wakeUp = live.get(sleeper);
      if (wakeUp) {
        wakeUp.at = at;
        heap.update(wakeUp);
      } else {
        const added: WakeUp = { sleeper, at, place: -1 };
        live.set(sleeper, added);
        heap.push(added);
      }
      arm();
    },
    cancel(sleeper: Sleeper): void {
      const wakeUp = live.get(sleeper);
      if (!wakeUp) return;
      live.delete(sleeper);
      heap.remove(wakeUp);
      arm();
    },
  };
  return withGetters(queue, { size: () => live.size });
}
