/** A value, or a promise of it: what a step that may wait returns (the hot path waits only when it must). */
export type MaybePromise<T> = T | PromiseLike<T>;

/** Whether a value that may or may not be a promise is one: the hot path awaits only those. */
export function isThenable<T>(value: T | PromiseLike<T>): value is PromiseLike<T> {
  return (
    (typeof value === 'object' || typeof value === 'function') &&
    value !== null &&
    typeof (value as { then?: unknown }).then === 'function'
  );
}

/**
 * `then(value)`, at once when `value` is not a promise, after it resolves when it is: the one way
 * code that may wait goes on, since each `await` costs a turn of the microtask queue.
 */
export function andThen<T, R>(value: T | PromiseLike<T>, then: (value: T) => R): R | Promise<R> {
  return isThenable(value) ? Promise.resolve(value).then(then) : then(value);
}
