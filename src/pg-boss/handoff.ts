import { createHash } from 'node:crypto';
import {
  checkOption,
  MS_OR_NONE,
  nonNegativeNumber,
  optionNames,
  refuseUnknownOptions,
} from '../common/option-checks.js';
import type PgBoss from 'pg-boss';
import {
  failedLimit,
  type FailedEvent,
  type FailedEvents,
  type Handoff,
  type HandoffJob,
  type QueuedJobRunner,
} from '../handoff/handoff.js';
import { bounded } from '../common/deadline.js';
import { checkQueueName, queueCreator, schemaOf } from './queue.js';
import { startWorker, workerSettings, type WorkerHandle, type WorkOptions } from './worker.js';

/** Options of {@link pgBossHandoff}. */
export interface PgBossHandoffOptions {
  /** A started pg-boss 10 instance (`await boss.start()`). The hand-off never stops it. */
  boss: PgBoss;
  /** The queue jobs go to; created on first use when missing. Default `jobhook`. */
  queue?: string;
  /** The schema of pg-boss's tables, for `listFailed`: needed only for a boss with a `db` of your own. */
  schema?: string;
  /** pg-boss send options over the defaults (`retryLimit: 9`, `retryDelay: 2`, `retryBackoff`); `id` and `singletonKey` are the hand-off's. */
  sendOptions?: Omit<PgBoss.SendOptions, 'id' | 'singletonKey' | 'db'>;
  /** Longest wait for PostgreSQL to store a job, in ms, before the delivery answers 503. Default 5,000; 0: none. */
  timeoutMs?: number;
}

/** The hand-off to pg-boss: its options, resolved, its failed events, and its worker. */
export interface PgBossHandoff extends Handoff<WorkOptions, WorkerHandle>, FailedEvents {
  readonly queue: string;
  readonly schema: string;
  /** Starts a worker on this hand-off's queue and boss, with pg-boss's retries; close it before `boss.stop()`. */
  work(receiver: QueuedJobRunner, options?: WorkOptions): Promise<WorkerHandle>;
}

/** The send options the hand-off uses unless `sendOptions` says otherwise. */
export const DEFAULT_SEND_OPTIONS = {
  retryLimit: 9,
  retryDelay: 2,
  retryBackoff: true,
} as const satisfies PgBoss.SendOptions;

const PG_BOSS_HANDOFF_OPTIONS = optionNames<PgBossHandoffOptions>()([
  'boss',
  'queue',
  'schema',
  'sendOptions',
  'timeoutMs',
]);

/** Verify, then enqueue on PostgreSQL (`handoff: pgBossHandoff({ boss })`): one job per dedupe key. */
export function pgBossHandoff(options: PgBossHandoffOptions): PgBossHandoff {
  refuseUnknownOptions(options, PG_BOSS_HANDOFF_OPTIONS, 'pgBossHandoff');
  const boss = options?.boss;
  const valid = typeof boss?.send === 'function' && typeof boss.getJobById === 'function';
  checkOption(
    'pgBossHandoff',
    'boss',
    boss,
    valid,
    'a started pg-boss instance, e.g. new PgBoss(connectionString)',
  );
  const queue = options.queue ?? 'jobhook';
  checkQueueName('pgBossHandoff', queue);
  const schema = schemaOf('pgBossHandoff', boss, options.schema);
  const timeoutMs = nonNegativeNumber('pgBossHandoff', 'timeoutMs', options.timeoutMs, 5000, {
    unit: MS_OR_NONE,
  });
  const sendOptions: PgBoss.SendOptions = { ...DEFAULT_SEND_OPTIONS, ...options.sendOptions };
  const ensureQueue = queueCreator(boss, queue);

  async function store(job: HandoffJob): Promise<void> {
    await ensureQueue();
    if (job.key === undefined) {
      await boss.send(queue, job as unknown as object, sendOptions);
      return;
    }
    const id = jobIdOf(job.key);
    if (await boss.getJobById(queue, id, { includeArchive: true })) return;
    await boss.send(queue, job as unknown as object, { ...sendOptions, id, singletonKey: job.key });
  }

  return {
    queue,
    schema,
    enqueue: (job) => bounded(store(job), timeoutMs, 'handoff_failed', 'The event could not be queued'),
    async listFailed(listOptions) {
      const limit = failedLimit(listOptions, 'pgBossHandoff.listFailed');
      await ensureQueue();
      const { rows } = await boss.getDb().executeSql(
        `SELECT id, data, output, retry_count, completed_on FROM "${schema}".job
          WHERE name = $1 AND state = 'failed' ORDER BY completed_on, id LIMIT $2`,
        [queue, limit],
      );
      return (rows as FailedRow[]).map(failedEventOf);
    },
    async retryFailed(id) {
      if (!isUuid(id)) return false;
      // Only a job in the failed state moves (to `retry`), in one UPDATE: twice, it runs once.
      const result = (await boss.retry(queue, id)) as unknown as { affected?: number } | undefined;
      return (result?.affected ?? 0) > 0;
    },
    async work(receiver, workOptions) {
      const settings = workerSettings('pgBossHandoff.work', receiver, workOptions);
      return startWorker({ boss, queue, ensureQueue }, settings);
    },
  };
}

interface FailedRow {
  id: string;
  data: Partial<HandoffJob> | null;
  output: { message?: unknown } | null;
  retry_count: number;
  completed_on: Date | null;
}

function failedEventOf(row: FailedRow): FailedEvent {
  const data = row.data ?? {};
  return {
    id: row.id,
    key: data.key,
    type: data.type ?? '',
    deliveryId: data.deliveryId ?? undefined,
    payload: data.payload,
    error: typeof row.output?.message === 'string' ? row.output.message : '',
    // retry_count counts the retries started: the attempts are one more.
    attempts: row.retry_count + 1,
    failedAt: row.completed_on ? row.completed_on.getTime() : undefined,
  };
}

const isUuid = (id: string) => /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i.test(id);

const NAMESPACE = Buffer.from('6f1c2b4e8a0d4c57b9e3a1d2c4f6e8b0', 'hex');

/** The pg-boss job id for a dedupe key: a name-based UUID (v5, RFC 9562), the same from every receiver. */
export function jobIdOf(key: string): string {
  const hash = createHash('sha1').update(NAMESPACE).update(key, 'utf8').digest();
  hash[6] = (hash[6]! & 0x0f) | 0x50; // version 5
  hash[8] = (hash[8]! & 0x3f) | 0x80; // RFC 9562 variant
  const hex = hash.subarray(0, 16).toString('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}
