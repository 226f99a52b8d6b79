/**
 * What the reconciler tells an observer (the receiver's `observer`, such as `otelObserver()`):
 * every method is optional, and a method that throws is logged once and otherwise ignored.
 */
export interface ReconcileObserver {
  /** One reconcile pass ended: see {@link ReconcileResult}. */
  reconciled?(pass: ReconcileResult): void;
  /** The gateway's `total_failed` of this receiver's webhook grew. */
  deliveriesFailed?(failures: DeliveryFailures): void;
  /** A task reached the tracker's `maxAgeMs` without ending: it is no longer tracked. */
  jobExpired?(job: ExpiredJob): void;
}

/** What one pass did (what `reconcileOnce()` resolves with). */
export interface ReconcileResult {
  /** Status polls made (each one gateway request). */
  polled: number;
  /** Outcomes found by polling whose handlers ran now. */
  dispatched: number;
  /** Polled tasks that have not ended yet: polled again later, with back-off. */
  pending: number;
  /** The gateway answered 429: the reconciler pauses until its Retry-After. */
  rateLimited: boolean;
}

/** The gateway failed deliveries to this receiver's webhook since the last reading. */
export interface DeliveryFailures {
  /** The webhook's URL, without query or credentials. */
  url: string;
  /** Deliveries that failed since `since`. */
  failed: number;
  /** All failed deliveries the gateway counted for the webhook. */
  totalFailed: number;
  /** When the counters were read before (ms since the epoch). */
  since: number;
  /** The gateway's `last_error`, if any. */
  lastError: string | undefined;
}

/** A task that was still running (or `unknown`) when it reached the tracker's `maxAgeMs`. */
export interface ExpiredJob {
  taskId: string;
  /** Its last status: `pending`, `processing`, `unknown`, or `undefined` when the poll failed. */
  status: string | undefined;
  /** Since its submission, in ms. */
  ageMs: number;
}
