import type PgBoss from 'pg-boss';
import { checkOption, optionNames, refuseUnknownOptions } from '../common/option-checks.js';
import { ownHandoffOf, type QueuedJobRunner } from '../handoff/handoff.js';
import { JobhookError } from '../common/errors.js';
import { differentFromHandoff, noQueue } from '../handoff/worker.js';
import type { PgBossHandoff } from './handoff.js';
import { checkQueueName, queueCreator, bossSchema } from './queue.js';
import { startWorker, workerSettings, type WorkerHandle } from './worker.js';

/** Options of {@link runPgBossWorker}. @deprecated Use `receiver.work(options)` ({@link WorkOptions}). */
export interface RunPgBossWorkerOptions {
  /** A started pg-boss 10 instance; needed without `handoff` (with it, its schema must be the hand-off's). */
  boss?: PgBoss;
  /** The queue's name, as given to `pgBossHandoff`. Default: the hand-off's, or `jobhook`. */
  queue?: string;
  concurrency?: number;
  pollingIntervalSeconds?: number;
  /** The worker's own errors, not the handlers'. Default: `console.error`. */
  onWorkerError?: (error: Error) => void;
  /** The hand-off whose queue the worker consumes (another `queue` or schema is refused). */
  handoff?: PgBossHandoff;
}

/** A running pg-boss worker. @deprecated Use {@link WorkerHandle}. */
export type PgBossWorkerHandle = WorkerHandle;

const RUN_PG_BOSS_WORKER_OPTIONS = optionNames<RunPgBossWorkerOptions>()([
  'boss',
  'queue',
  'concurrency',
  'pollingIntervalSeconds',
  'onWorkerError',
  'handoff',
]);

/** Runs the handlers of the jobs `pgBossHandoff` queued. @deprecated Use `receiver.work(options)`. */
export async function runPgBossWorker(
  receiver: QueuedJobRunner,
  options: RunPgBossWorkerOptions,
): Promise<WorkerHandle> {
  const where = 'runPgBossWorker';
  refuseUnknownOptions(options, RUN_PG_BOSS_WORKER_OPTIONS, where);
  const { boss, queue, handoff: given, ...work } = options ?? {};
  const settings = workerSettings(where, receiver, work);
  const handoff = given ?? receiversPgBossHandoff(where, receiver);
  if (handoff !== undefined) {
    const valid = typeof handoff?.work === 'function' && typeof handoff.queue === 'string';
    checkOption(where, 'handoff', handoff, valid, 'the pgBossHandoff the receiver hands off to');
    if (queue !== undefined && queue !== handoff.queue) {
      throw differentFromHandoff(where, 'queue', queue, 'queue', handoff.queue);
    }
    const schema = boss === undefined ? undefined : bossSchema(boss);
    if (schema !== undefined && schema !== handoff.schema) {
      throw differentFromHandoff(where, 'boss', schema, 'schema', handoff.schema, 'works in schema');
    }
    return handoff.work(receiver, work);
  }
  const valid = typeof boss?.fetch === 'function' && typeof boss?.complete === 'function';
  checkOption(where, 'boss', boss, valid, 'a started pg-boss instance');
  const name = queue ?? 'jobhook';
  checkQueueName(where, name);
  if (queue === undefined) await refuseMissingDefault(where, boss!, name);
  return startWorker({ boss: boss!, queue: name, ensureQueue: queueCreator(boss!, name) }, settings);
}

/**
 * The receiver's own hand-off when it is pg-boss's, so that the worker polls the queue the
 * receiver writes to; a receiver that hands off to another engine is refused.
 */
function receiversPgBossHandoff(where: string, receiver: QueuedJobRunner): PgBossHandoff | undefined {
  const own = ownHandoffOf(receiver);
  if (own === undefined) return undefined;
  const { queue, schema } = own as Partial<PgBossHandoff>;
  if (typeof queue === 'string' && typeof schema === 'string') return own as PgBossHandoff;
  throw new JobhookError(
    'invalid_options',
    `${where}: the receiver hands off to another engine than pg-boss; start its worker with receiver.work().`,
  );
}

/** Refuses the default queue when it does not exist but others do: the hand-off's has another name. */
async function refuseMissingDefault(where: string, boss: PgBoss, name: string): Promise<void> {
  if (await boss.getQueue(name)) return;
  // pg-boss keeps queues of its own (`__pgboss__send-it`): they say nothing of the app's.
  const others = (await boss.getQueues())
    .map((each) => each.name)
    .filter((other) => other !== name && !other.startsWith('__pgboss__'));
  if (others.length === 0) return;
  const shown = others.slice(0, 10).map((other) => JSON.stringify(other));
  const more = others.length > shown.length ? ` and ${others.length - shown.length} more` : '';
  const schema = bossSchema(boss);
  const place = schema === undefined ? '' : ` in schema ${JSON.stringify(schema)}`;
  throw noQueue(where, 'pg-boss queue', name, `${place}, whose queues are ${shown.join(', ')}${more}`);
}
