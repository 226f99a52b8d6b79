import { checkOption, optionNames, positiveInteger, refuseUnknownOptions } from '../common/options.js';
import { checkReceiver } from '../handoff/queued-receiver.js';
import type PgBoss from 'pg-boss';
import type { HandoffJob, QueuedJobRunner } from '../handoff/handoff.js';
import { checkQueueName, queueCreator } from './handoff.js';

/** Options of {@link runPgBossWorker}. */
export interface RunPgBossWorkerOptions {
  /** A started pg-boss 10 instance (`await boss.start()`). The worker never stops it. */
  boss: PgBoss;
  /** The queue's name, as given to `pgBossHandoff`. Default `jobhook`. */
  queue?: string;
  /** Jobs this worker runs at once (pg-boss workers of one job each). Default 8. */
  concurrency?: number;
  /** How often an idle worker asks PostgreSQL for a job, in seconds. Default 2 (pg-boss's). */
  pollingIntervalSeconds?: number;
}

/** A running pg-boss worker: {@link runPgBossWorker}'s result. */
export interface PgBossWorkerHandle {
  /** The pg-boss worker ids (`boss.offWork({ id })`, `boss.getWorkers()`). */
  readonly workerIds: readonly string[];
  /** Stops taking jobs and resolves once the jobs it runs have finished. */
  close(): Promise<void>;
}

const RUN_PG_BOSS_WORKER_OPTIONS = optionNames<RunPgBossWorkerOptions>()([
  'boss',
  'queue',
  'concurrency',
  'pollingIntervalSeconds',
]);

/**
 * Runs the receiver's handlers for the jobs `pgBossHandoff` queued, in this process: each job's
 * event goes to `receiver.handleQueued`, with `context.attempt` (pg-boss's retry count plus one)
 * and the receiver's handler time-out and `onError` reporting. A job whose handlers fail is retried
 * by pg-boss (the job's `retryLimit`, `retryDelay`, `retryBackoff`); after its last attempt it
 * stays in the `failed` state with its event and error, for `listFailed` and `retryFailed`. A job
 * whose worker died is retried once it expires (the job's `expireInSeconds`, default 15 minutes,
 * checked by pg-boss's supervision every `maintenanceIntervalSeconds`).
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
    typeof boss?.work === 'function',
    'a started pg-boss instance',
  );
  const queue = options.queue ?? 'jobhook';
  checkQueueName('runPgBossWorker', queue);
  const concurrency = positiveInteger('runPgBossWorker', 'concurrency', options.concurrency, 8);
  await queueCreator(boss, queue)();

  const running = new Set<Promise<unknown>>();
  const handle = async ([job]: PgBoss.JobWithMetadata<HandoffJob>[]) => {
    if (!job) return;
    const attempt = job.retryCount + 1;
    // The first attempt tells the receiver's observer the time from hand-off to start.
    const run = receiver.handleQueued(job.data, { attempt });
    running.add(run);
    try {
      await run;
    } finally {
      running.delete(run);
    }
  };
  const workOptions = {
    includeMetadata: true as const,
    batchSize: 1,
    ...(options.pollingIntervalSeconds !== undefined && {
      pollingIntervalSeconds: options.pollingIntervalSeconds,
    }),
  };
  const workerIds: string[] = [];
  for (let i = 0; i < concurrency; i++)
    workerIds.push(await boss.work<HandoffJob>(queue, workOptions, handle));

  return {
    workerIds,
    async close() {
      for (const id of workerIds) await boss.offWork({ id });
      while (running.size > 0) await Promise.allSettled([...running]);
    },
  };
}
