import { checkOption, wholeNumber } from '../common/option-checks.js';
import { JOB_TRACKER, type JobTracker } from '../tracker/job-tracker.js';

/** What the reconciler calls on the gateway: a client from `jobhook/client` has both. */
export interface ReconcileClient {
  images: {
    /** GET /api/v1/images/{task_id}: a task's status. */
    get(
      taskId: string,
      options?: { signal?: AbortSignal; timeoutMs?: number; retries?: number },
    ): Promise<{ status: string; [field: string]: unknown }>;
  };
  webhooks?: {
    /** GET /api/v1/webhooks: the webhooks, with their delivery counters. */
    list(options?: { signal?: AbortSignal; timeoutMs?: number; retries?: number }): Promise<
      readonly {
        url: string;
        total_failed?: number | undefined;
        last_error?: string | null | undefined;
        [field: string]: unknown;
      }[]
    >;
  };
}

/** `createReceiver({ reconcile })`: poll the tasks whose webhook never came. */
export interface ReconcileOptions {
  /** A client from `jobhook/client` (`createClient`): the status polls and webhook counters go through it. */
  client: ReconcileClient;
  /** The tracker the submitting client records tasks in (`createClient({ jobs })`). */
  jobs: JobTracker;
  /** A task is polled once its outcome is this late after submission, in ms. Default 120,000. */
  afterMs?: number;
  /** How often a pass runs, in ms (a running task's first back-off). Default 30,000; 0: call `reconcileOnce()`. */
  intervalMs?: number;
  /** Status polls in flight at once, per instance. Default 2. */
  concurrency?: number;
  /** Most status polls in one pass, per instance. Default 50. */
  maxPollsPerPass?: number;
  /** This receiver's webhook URL, whose failure counters are watched. Default: the one given to `register()`. */
  webhookUrl?: string;
}

export interface ResolvedReconcile {
  client: ReconcileClient;
  jobs: JobTracker;
  afterMs: number;
  intervalMs: number;
  concurrency: number;
  maxPollsPerPass: number;
  webhookUrl: string | undefined;
}

/** Longest wait between two polls of a task still running: a stuck task costs ~170 polls a week. */
export const MAX_BACKOFF_MS = 60 * 60 * 1000;

const WHERE = 'createReceiver';

export function resolveReconcile(options: ReconcileOptions): ResolvedReconcile {
  const valid = typeof options === 'object' && options !== null;
  checkOption(WHERE, 'reconcile', options, valid, 'an object such as { client, jobs }');
  const { client, jobs } = options;
  const gateway = typeof client?.images?.get === 'function';
  checkOption(
    WHERE,
    'reconcile.client',
    client,
    gateway,
    'a gateway client: createClient({ baseUrl, apiKey })',
  );
  const methods = ['track', 'settle', 'claimDue', 'release', 'pending'] as const;
  const tracker =
    typeof jobs === 'object' && jobs !== null && methods.every((m) => typeof jobs[m] === 'function');
  checkOption(WHERE, 'reconcile.jobs', jobs, tracker, JOB_TRACKER);
  const whole = (name: keyof ReconcileOptions, fallback: number, min: number, unit?: string) =>
    wholeNumber(WHERE, `reconcile.${name}`, options[name], fallback, { min, unit });
  const url = options.webhookUrl;
  const isUrl = url === undefined || typeof url === 'string';
  checkOption(WHERE, 'reconcile.webhookUrl', url, isUrl, 'the URL string the webhook was registered with');
  return {
    client,
    jobs,
    afterMs: whole('afterMs', 120_000, 0, 'ms'),
    intervalMs: whole('intervalMs', 30_000, 0, 'ms'),
    concurrency: whole('concurrency', 2, 1),
    maxPollsPerPass: whole('maxPollsPerPass', 50, 1),
    webhookUrl: url,
  };
}

/** What the reconciler tells the receiver's observer; a method that throws is logged once, then ignored. */
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
  ageMs: number;
}
