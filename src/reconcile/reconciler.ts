import { backoffDelay } from '../common/backoff.js';
import { isRecord } from '../common/values.js';
import { messageOf, quote, type SafeLogger } from '../common/logging.js';
import type { TrackedJob } from '../tracker/job-tracker.js';
import type { EventOutcome } from '../events/event-types.js';
import { deliveryFailureWatch, rateLimitOf, statusOf } from './gateway.js';
import {
  MAX_BACKOFF_MS,
  type ResolvedReconcile,
  type ReconcileObserver,
  type ReconcileResult,
} from './options.js';

/** Runs a polled outcome through the receiver, as an event of the tenant the task was tracked for. */
export type DispatchPolled = (event: PolledEvent & { tenant: string | undefined }) => Promise<EventOutcome>;

export interface Reconciler {
  reconcileOnce(): Promise<ReconcileResult>;
  /** A webhook of `tenant` handled the task's outcome: it is not polled. Never rejects. */
  settled(taskId: string, tenant: string | undefined): Promise<void>;
  watchUrl(url: string): void;
  close(): Promise<void>;
}

/** Polls the overdue tracked tasks every `intervalMs`, dispatching what ended; a 429 stops it till Retry-After. */
export function createReconciler(config: {
  options: ResolvedReconcile;
  dispatch: DispatchPolled;
  logger: SafeLogger;
  observer?: ReconcileObserver | undefined;
  now: () => number;
  /** A task's poll (and the handling of its outcome) started: waits on the task join it. */
  polling?: (taskId: string, tenant: string | undefined, poll: Promise<void>) => void;
  /** Asks the gateway for a task, sharing a GET in flight for it (confirm mode). Default: the client's own. */
  lookup?: (taskId: string, tenant: string | undefined, signal: AbortSignal) => Promise<unknown>;
  /** Whether the task's outcome was handled here already (confirm mode): it is settled with no GET. */
  handled?: (taskId: string, tenant: string | undefined) => boolean;
}): Reconciler {
  const { options, logger, now } = config;
  const { client, jobs, intervalMs } = options;
  // Made at the first pass: Workers refuse an AbortController (or random values) in global scope.
  let closingController: AbortController | undefined;
  const closing = () => (closingController ??= new AbortController());
  let closed = false;
  let pausedUntil = 0;
  let running: Promise<ReconcileResult> | undefined;
  let webhookUrl = options.webhookUrl;
  let ownerPrefix: string | undefined;
  let passes = 0;
  const backoffBase = intervalMs > 0 ? intervalMs : 30_000;
  const pollTimeoutMs = Math.max(100, Math.min(30_000, Math.floor(jobs.leaseMs / 4)));

  const warned = new Set<string>();
  const warnOnce = (kind: string, message: string) => {
    if (warned.has(kind)) return;
    warned.add(kind);
    logger.warn(message);
  };
  const observe = <K extends keyof ReconcileObserver>(
    method: K,
    value: Parameters<NonNullable<ReconcileObserver[K]>>[0],
  ) => {
    const observer = config.observer;
    if (typeof observer?.[method] !== 'function') return;
    try {
      (observer[method] as (value: unknown) => void).call(observer, value);
    } catch (error) {
      warnOnce('observer', `jobhook: the receiver's observer failed in ${method}(): ${messageOf(error)}`);
    }
  };

  function pause(retryAfterMs: number | undefined) {
    const until = now() + (retryAfterMs ?? 2 * backoffBase);
    if (until <= pausedUntil) return;
    pausedUntil = until;
    logger.warn(
      `jobhook: the gateway answered 429 (rate limit) to the reconciler, which pauses until ` +
        `${new Date(until).toISOString()} so as not to spend the app's own requests.`,
    );
  }

  const watch = deliveryFailureWatch({
    client,
    url: () => webhookUrl,
    intervalMs,
    now,
    logger,
    report: (failures) => observe('deliveriesFailed', failures),
    rateLimited: pause,
  });

  const backoff = { firstMs: backoffBase, maxMs: MAX_BACKOFF_MS };
  const backoffAt = (job: TrackedJob) => now() + backoffDelay(backoff, job.polls);

  async function trackerStep(what: string, step: () => unknown): Promise<void> {
    try {
      await step();
    } catch (error) {
      warnOnce('tracker', `jobhook: the job tracker failed to ${what}: ${messageOf(error)}`);
    }
  }
  const release = (job: TrackedJob, owner: string, at: number) =>
    trackerStep('release a task', () => jobs.release(job.taskId, owner, at));
  const settle = (taskId: string, tenant: string | undefined) =>
    trackerStep('forget a task', () =>
      tenant === undefined ? jobs.settle(taskId) : jobs.settle(taskId, tenant),
    );

  function expire(job: TrackedJob, status: string | undefined) {
    const ageMs = now() - job.submittedAt;
    logger.warn(
      `jobhook: task ${quote(job.taskId)} is still ${status ?? 'unreadable'} ${Math.round(ageMs / 3_600_000)} h ` +
        'after its submission: it is no longer tracked, and no outcome was made up for it.',
    );
    observe('jobExpired', { taskId: job.taskId, status, ageMs });
    return settle(job.taskId, job.tenant);
  }

  function pollOne(
    job: TrackedJob,
    owner: string,
    claimedAt: number,
    result: ReconcileResult,
  ): Promise<void> {
    const polled = pollTask(job, owner, claimedAt, result);
    config.polling?.(job.taskId, job.tenant, polled);
    return polled;
  }

  async function pollTask(
    job: TrackedJob,
    owner: string,
    claimedAt: number,
    result: ReconcileResult,
  ): Promise<void> {
    // A poll must start within half the lease and ends within a quarter more, before another instance may take it.
    const late = now() - claimedAt > jobs.leaseMs / 2;
    if (closed || late || now() < pausedUntil) return release(job, owner, Math.max(pausedUntil, now()));
    if (config.handled?.(job.taskId, job.tenant)) return settle(job.taskId, job.tenant);
    let task: unknown;
    try {
      task = config.lookup
        ? await config.lookup(job.taskId, job.tenant, closing().signal)
        : await client.images.get(job.taskId, {
            signal: closing().signal,
            retries: 0,
            timeoutMs: pollTimeoutMs,
          });
      result.polled++;
    } catch (error) {
      if (closing().signal.aborted) return release(job, owner, now());
      result.polled++;
      const limited = rateLimitOf(error);
      if (limited) {
        pause(limited.retryAfterMs);
        result.rateLimited = true;
        return release(job, owner, pausedUntil);
      }
      if (statusOf(error) === 404) {
        logger.warn(
          `jobhook: task ${quote(job.taskId)} is unknown to the gateway (404): it is no longer tracked.`,
        );
        return settle(job.taskId, job.tenant);
      }
      if (now() - job.submittedAt >= jobs.maxAgeMs) return expire(job, undefined);
      warnOnce(
        'poll',
        `jobhook: the status poll of task ${quote(job.taskId)} failed (polled again later): ${messageOf(error)}`,
      );
      return release(job, owner, backoffAt(job));
    }
    if (!isRecord(task)) {
      if (now() - job.submittedAt >= jobs.maxAgeMs) return expire(job, undefined);
      warnOnce(
        'poll',
        `jobhook: the status poll of task ${quote(job.taskId)} answered no task record (polled again later).`,
      );
      return release(job, owner, backoffAt(job));
    }
    const event = polledEvent(job.taskId, task, now());
    if (!event) {
      const status = typeof task.status === 'string' ? task.status : undefined;
      if (now() - job.submittedAt >= jobs.maxAgeMs) return expire(job, status);
      result.pending++;
      return release(job, owner, backoffAt(job));
    }
    let outcome: EventOutcome;
    try {
      outcome = await config.dispatch({ ...event, tenant: job.tenant });
    } catch (error) {
      logger.warn(
        `jobhook: dispatching the polled outcome of ${quote(job.taskId)} failed: ${messageOf(error)}`,
      );
      outcome = 'failed';
    }
    if (outcome === 'handled') result.dispatched++;
    if (outcome === 'handled' || outcome === 'duplicate') return settle(job.taskId, job.tenant);
    if (outcome === 'busy') return release(job, owner, now() + backoffBase);
    if (outcome === 'invalid') {
      logger.error(
        `jobhook: the receiver refused the polled outcome of task ${quote(job.taskId)} for good ` +
          '(see the line logged with it): it is no longer tracked.',
      );
      return settle(job.taskId, job.tenant);
    }
    return release(job, owner, backoffAt(job));
  }

  async function pass(): Promise<ReconcileResult> {
    const result: ReconcileResult = { polled: 0, dispatched: 0, pending: 0, rateLimited: false };
    if (closed) return result;
    if (now() >= pausedUntil) await watch.check(closing().signal);
    if (now() < pausedUntil) {
      result.rateLimited = true;
      return result;
    }
    ownerPrefix ??= globalThis.crypto.randomUUID();
    const owner = `${ownerPrefix}.${(++passes).toString(36)}`;
    let claimed: readonly TrackedJob[];
    const claimedAt = now();
    try {
      claimed = await jobs.claimDue({
        owner,
        limit: options.maxPollsPerPass,
        afterMs: options.afterMs,
        now: claimedAt,
      });
    } catch (error) {
      warnOnce('tracker', `jobhook: the job tracker failed to hand out due tasks: ${messageOf(error)}`);
      return result;
    }
    const queue = [...claimed];
    const worker = async () => {
      for (let job = queue.shift(); job; job = queue.shift()) {
        try {
          await pollOne(job, owner, claimedAt, result);
        } catch (error) {
          warnOnce(
            'poll',
            `jobhook: polling task ${quote(job.taskId)} failed (polled again later): ${messageOf(error)}`,
          );
          await release(job, owner, backoffAt(job));
        }
      }
    };
    await Promise.all(Array.from({ length: Math.min(options.concurrency, queue.length) }, worker));
    if (!result.rateLimited && claimed.length > 0) warned.clear();
    observe('reconciled', result);
    return result;
  }

  function reconcileOnce(): Promise<ReconcileResult> {
    const next = (running ?? Promise.resolve()).then(pass, pass);
    running = next;
    // then(done, done), not finally(): the promise finally() returns would reject unhandled.
    const done = () => {
      if (running === next) running = undefined;
    };
    next.then(done, done);
    return next;
  }

  let timer: ReturnType<typeof setInterval> | undefined;
  if (intervalMs > 0) {
    try {
      timer = setInterval(() => {
        if (!running)
          reconcileOnce().catch((error: unknown) =>
            warnOnce('pass', `jobhook: a reconcile pass failed: ${messageOf(error)}`),
          );
      }, intervalMs);
      timer.unref?.();
    } catch (error) {
      logger.warn(
        `jobhook: could not start the reconcile timer (${messageOf(error)}): call receiver.reconcileOnce() ` +
          'from a cron, and pass reconcile.intervalMs: 0.',
      );
    }
  }

  return {
    reconcileOnce,
    settled: (taskId, tenant) => settle(taskId, tenant),
    watchUrl(url) {
      webhookUrl ??= url;
    },
    async close() {
      closed = true;
      if (timer !== undefined) clearInterval(timer);
      closingController?.abort();
      await running?.catch(() => undefined);
    },
  };
}

/** The event a poll found, as a webhook would carry it; its `id` is `poll_<task_id>` (the gateway keeps none). */
export interface PolledEvent {
  type: 'job.completed' | 'job.failed';
  taskId: string;
  payload: {
    id: string;
    type: 'job.completed' | 'job.failed';
    created_at: string;
    data: Record<string, unknown>;
  };
}

export function polledEvent(
  taskId: string,
  task: Record<string, unknown>,
  now: number,
): PolledEvent | undefined {
  const status = task.status;
  if (status !== 'completed' && status !== 'failed') return undefined;
  const type = status === 'completed' ? 'job.completed' : 'job.failed';
  const data: Record<string, unknown> = { ...task, task_id: taskId, status };
  // A failed task's record may hold no error: the event keeps its promise of one, saying so.
  if (status === 'failed' && !isError(task.error)) {
    data.error = { code: 'unknown', message: 'The gateway reported the job failed without saying why.' };
  }
  const at = typeof task.updated_at === 'string' ? task.updated_at : new Date(now).toISOString();
  return { type, taskId, payload: { id: `poll_${taskId}`, type, created_at: at, data } };
}

function isError(value: unknown): boolean {
  const error = value as { code?: unknown; message?: unknown } | null | undefined;
  return typeof error?.code === 'string' && typeof error.message === 'string';
}
