import { checkOption, func, optionNames, positiveInteger, refuseUnknownOptions } from '../common/options.js';
import { checkReceiver } from '../handoff/queued-receiver.js';
import type PgBoss from 'pg-boss';
import { messageOf } from '../common/logger.js';
import type { HandoffJob, QueuedJobRunner } from '../handoff/handoff.js';
import { checkQueueName, queueCreator } from './handoff.js';
import { settleJob } from './settle.js';

/** Options of {@link runPgBossWorker}. */
export interface RunPgBossWorkerOptions {
  /** A started pg-boss 10 instance (`await boss.start()`). The worker never stops it. */
  boss: PgBoss;
  /** The queue's name, as given to `pgBossHandoff`. Default `jobhook`. */
  queue?: string;
  /** Jobs this worker runs at once. Default 8. */
  concurrency?: number;
  /** How often an idle worker asks PostgreSQL for a job, in seconds (at least 0.5). Default 2. */
  pollingIntervalSeconds?: number;
  /**
   * Receives the worker's own errors (a job's outcome that could not be stored before the job
   * expired), not the handlers' failures, which go to the receiver's `onError`. Default:
   * `console.error`.
   */
  onWorkerError?: (error: Error) => void;
}

/** A running pg-boss worker: {@link runPgBossWorker}'s result. */
export interface PgBossWorkerHandle {
  /** Stops taking jobs and resolves once the jobs it runs have finished and their outcomes are stored. */
  close(): Promise<void>;
}

const RUN_PG_BOSS_WORKER_OPTIONS = optionNames<RunPgBossWorkerOptions>()([
  'boss',
  'queue',
  'concurrency',
  'pollingIntervalSeconds',
  'onWorkerError',
]);

/**
 * Runs the receiver's handlers for the jobs `pgBossHandoff` queued, in this process: each job's
 * event goes to `receiver.handleQueued`, with `context.attempt` (pg-boss's retry count plus one)
 * and the receiver's handler time-out and `onError` reporting. A job whose handlers fail is retried
 * by pg-boss (the job's `retryLimit`, `retryDelay`, `retryBackoff`); after its last attempt it
 * stays in the `failed` state with its event and error, for `listFailed` and `retryFailed`. A job
 * whose worker died is retried once it expires (the job's `expireInSeconds`, default 15 minutes,
 * checked by pg-boss's supervision every `maintenanceIntervalSeconds`): keep it above the
 * receiver's `handlerTimeoutMs`.
 *
 * The worker takes jobs with `boss.fetch` and stores each outcome itself (`settleJob`), awaited and
 * tried again when a connection is cut under it, rather than through `boss.work`, which sends the
 * completion once without waiting for it: a completion lost that way made pg-boss run a job whose
 * handlers had succeeded again, and its unhandled rejection ended the worker's process.
 */
export async function runPgBossWorker(
  receiver: QueuedJobRunner,
  options: RunPgBossWorkerOptions,
): Promise<PgBossWorkerHandle> {
  refuseUnknownOptions(options, RUN_PG_BOSS_WORKER_OPTIONS, 'runPgBossWorker');
  checkReceiver('runPgBossWorker', receiver);
  const boss = options?.boss;
  checkOption(
    'runPgBossWorker',
    'boss',
    boss,
    typeof boss?.fetch === 'function' && typeof boss?.complete === 'function',
    'a started pg-boss instance',
  );
  const queue = options.queue ?? 'jobhook';
  checkQueueName('runPgBossWorker', queue);
  const concurrency = positiveInteger('runPgBossWorker', 'concurrency', options.concurrency, 8);
  const pollingSeconds = options.pollingIntervalSeconds ?? 2;
  checkOption(
    'runPgBossWorker',
    'pollingIntervalSeconds',
    pollingSeconds,
    Number.isFinite(pollingSeconds) && pollingSeconds >= 0.5,
    'a number of seconds, 0.5 or more',
  );
  const userOnError =
    func('runPgBossWorker', 'onWorkerError', options.onWorkerError) ??
    ((error: Error) => console.error(`jobhook: worker: ${messageOf(error)}`));
  const onWorkerError = (error: Error) => {
    try {
      userOnError(error);
    } catch {
      // A reporter that throws must not stop the worker.
    }
  };
  await queueCreator(boss, queue)();

  let closing = false;
  const idle = new Set<() => void>();
  const pause = (ms: number) =>
    new Promise<void>((resolve) => {
      const wake = () => {
        clearTimeout(timer);
        idle.delete(wake);
        resolve();
      };
      const timer = setTimeout(wake, ms);
      idle.add(wake);
    });

  async function run(job: PgBoss.JobWithMetadata<HandoffJob>): Promise<void> {
    // Counted from when this process got the job, a little after PostgreSQL started it: the
    // expiry is only a bound on how long to keep trying to store the outcome.
    const expiresAt = Date.now() + Number(job.expireInSeconds) * 1000;
    let outcome: { ok: true } | { ok: false; error: unknown } = { ok: true };
    try {
      // The first attempt tells the receiver's observer the time from hand-off to start.
      await receiver.handleQueued(job.data, { attempt: job.retryCount + 1 });
    } catch (error) {
      outcome = { ok: false, error };
    }
    await settleJob(boss, queue, { id: job.id, expiresAt }, outcome, onWorkerError);
  }

  async function slot(): Promise<void> {
    while (!closing) {
      let job: PgBoss.JobWithMetadata<HandoffJob> | undefined;
      try {
        // pg-boss answers [] when PostgreSQL cannot be reached: the slot waits and asks again.
        [job] = await boss.fetch<HandoffJob>(queue, { batchSize: 1, includeMetadata: true });
      } catch (error) {
        onWorkerError(error instanceof Error ? error : new Error(String(error)));
      }
      if (job) await run(job);
      else if (!closing) await pause(pollingSeconds * 1000);
    }
  }

  const slots = Array.from({ length: concurrency }, slot);
  return {
    async close() {
      closing = true;
      for (const wake of [...idle]) wake();
      await Promise.all(slots);
    },
  };
}
