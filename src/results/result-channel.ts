import type { JobResult } from './job-result.js';

/**
 * Carries job results between the instances of an app, so that a waiter on one instance is woken
 * by a delivery another instance received. Without one (the default) results stay in the process
 * that received them, and a waiter elsewhere learns the outcome by polling the gateway.
 *
 * `jobhook/redis` has one over Redis pub/sub (`redisResultChannel`). A channel carries results
 * that were verified by the receiver that published them: whoever can publish on it can wake
 * waiters, so it must be as private as the dedupe store.
 */
export interface ResultChannel {
  /**
   * Announces a result this instance received. Called without awaiting the delivery's answer:
   * a failure is logged, and a waiter elsewhere still gets the result from its polling.
   */
  publish(result: JobResult): void | Promise<void>;
  /**
   * Delivers every result any instance publishes (this one's own may come back too) to
   * `onResult`; `onError` receives failures after the subscription was made (a lost
   * connection, say). Called once, when the receiver is created.
   */
  subscribe(onResult: (result: JobResult) => void, onError: (error: unknown) => void): void | Promise<void>;
  /** Stops the subscription and frees what the channel holds; called by `receiver.close()`. */
  close?(): void | Promise<void>;
}

/** Whether an option value is a channel rather than an options object. */
export function isResultChannel(value: unknown): value is ResultChannel {
  return (
    typeof value === 'object' &&
    value !== null &&
    typeof (value as ResultChannel).publish === 'function' &&
    typeof (value as ResultChannel).subscribe === 'function'
  );
}
