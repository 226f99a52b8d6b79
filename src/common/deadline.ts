// The one deadline module: every "stop waiting after N ms" of jobhook is made here.
import { JobhookError, type JobhookErrorCode } from './errors.js';
import { messageOf } from './logging.js';
import { ExpiryList, type ExpiryLinks } from './structures.js';

/** What {@link within} gives when the work did not settle in time. */
export const TIMED_OUT: unique symbol = Symbol('timed out');

/** Resolves like `work`, or with {@link TIMED_OUT} once `timeoutMs` (if > 0 and finite) passed first. */
export function within<T>(
  work: PromiseLike<T>,
  timeoutMs: number,
  options: { unref?: boolean } = {},
): Promise<T | typeof TIMED_OUT> {
  if (!(timeoutMs > 0 && Number.isFinite(timeoutMs))) return Promise.resolve(work);
  return new Promise((resolve, reject) => {
    const timer = setTimeout(resolve, timeoutMs, TIMED_OUT);
    if (options.unref) (timer as { unref?: () => void }).unref?.();
    work.then(
      (value) => {
        clearTimeout(timer);
        resolve(value);
      },
      (error: unknown) => {
        clearTimeout(timer);
        // eslint-disable-next-line @typescript-eslint/prefer-promise-reject-errors -- passed on as it came
        reject(error);
      },
    );
  });
}

/** A shared service's call, failing with a JobhookError of `code` when it rejects or outlasts `timeoutMs`. */
export function bounded<T>(
  operation: Promise<T>,
  timeoutMs: number,
  code: JobhookErrorCode,
  failure: string,
): Promise<T> {
  const failed = (cause: unknown) => new JobhookError(code, `${failure}: ${messageOf(cause)}`, { cause });
  return within(operation, timeoutMs).then(
    (value) =>
      value === TIMED_OUT ? Promise.reject(failed(new Error(`no answer within ${timeoutMs} ms`))) : value,
    (error: unknown) => Promise.reject(failed(error)),
  );
}

/** A deadline that has not passed yet: cancel it once the work is done in time (idempotent). */
export interface Deadline {
  cancel(): void;
}

/** Calls `expire` once `ms` have passed, unless the deadline is cancelled first. */
export function deadline(ms: number, expire: () => void): Deadline {
  const timer = setTimeout(expire, ms);
  return { cancel: () => clearTimeout(timer) };
}

interface Entry extends Deadline, ExpiryLinks<Entry> {
  expire: () => void;
}

/** Deadlines of one length on one unref'd timer and the monotonic clock, which no step of the wall clock moves. */
export function deadlines(timeoutMs: number) {
  const queue = new ExpiryList<Entry>();
  let timer: ReturnType<typeof setTimeout> | undefined;

  function arm(head: Entry) {
    // At least 1 ms: a clock that has not moved yet (Workers advance it between events) must not spin.
    timer = setTimeout(fire, Math.max(1, head.expiresAt - performance.now()));
    (timer as { unref?: () => void }).unref?.();
  }

  function fire() {
    timer = undefined;
    const now = performance.now();
    for (let due = queue.shift(now); due; due = queue.shift(now)) due.expire();
    if (queue.oldest && timer === undefined) arm(queue.oldest);
  }

  function cancel(this: Entry) {
    if (this.list) this.list.remove(this);
  }

  return {
    start(expire: () => void): Deadline {
      const entry: Entry = {
        expire,
        cancel,
        expiresAt: 0,
        list: undefined,
        older: undefined,
        newer: undefined,
      };
      queue.push(entry, performance.now() + timeoutMs);
      if (timer === undefined) arm(entry);
      return entry;
    },
  };
}

/** Whether a value that may be a promise is one: code that runs others' functions awaits only those. */
export function isThenable<T>(value: T | PromiseLike<T>): value is PromiseLike<T> {
  return (
    (typeof value === 'object' || typeof value === 'function') &&
    value !== null &&
    typeof (value as { then?: unknown }).then === 'function'
  );
}

/**
 * `next` of a value at once, or of a promise once it settles: a step that waits only when something
 * does. The pipeline's promise is always a native one (its own steps and `Promise.resolve`d calls).
 */
export function whenSettled<T, R>(
  value: T | Promise<T>,
  next: (settled: T) => R | Promise<R>,
): R | Promise<R> {
  return value instanceof Promise ? value.then(next) : next(value);
}
