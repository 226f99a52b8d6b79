import { isRecord } from '../common/values.js';

/** A job's outcome from a verified, valid `job.completed` or `job.failed`: what a `waitFor` is woken with. */
export interface JobResult {
  /** The task's id (`data.task_id`). */
  taskId: string;
  status: 'completed' | 'failed';
  /** What a waiter resolves with: `task_id`, `status`, and `image_url` or `error` (not the whole event: memory). */
  data: Readonly<Record<string, unknown>>;
  /** When this process learned it, in ms since the epoch (the receiver's clock). */
  receivedAt: number;
  /** The tenant whose delivery carried it, for a receiver with a `secret` function. */
  tenant?: string;
}

/** A key within its tenant's space (the tenant's length leads, so no pair reads as another); as is without one. */
export function scopedKey(tenant: string | undefined, key: string): string {
  return tenant === undefined ? key : `tenant:${tenant.length}:${tenant}:${key}`;
}

const STATUS_OF_TYPE: Readonly<Record<string, JobResult['status']>> = {
  'job.completed': 'completed',
  'job.failed': 'failed',
};

/** A result as the receiver keeps it: the fields a waiter reads, the {@link JobResult} made only when asked. */
export class KeptResult {
  #result: JobResult | undefined;

  readonly key: string;

  constructor(
    readonly taskId: string,
    readonly tenant: string | undefined,
    readonly status: JobResult['status'],
    readonly receivedAt: number,
    private readonly dataStatus: unknown,
    private readonly imageUrl: string | undefined,
    private readonly error: { code: unknown; message: unknown } | undefined,
    result?: JobResult,
  ) {
    this.#result = result;
    this.key = scopedKey(tenant, taskId);
  }

  static of(result: JobResult): KeptResult {
    return new KeptResult(
      result.taskId,
      typeof result.tenant === 'string' ? result.tenant : undefined,
      result.status,
      result.receivedAt,
      undefined,
      undefined,
      undefined,
      result,
    );
  }

  get result(): JobResult {
    if (this.#result) return this.#result;
    const result: JobResult = {
      taskId: this.taskId,
      status: this.status,
      data: waitedFor(this.taskId, this.dataStatus, this.imageUrl, this.error),
      receivedAt: this.receivedAt,
    };
    if (this.tenant !== undefined) result.tenant = this.tenant;
    return (this.#result = result);
  }
}

/** The result an event of `type` carries, or undefined (another type, or no string `data.task_id`). */
export function resultOf(
  type: string,
  event: unknown,
  receivedAt: number,
  tenant: string | undefined,
): KeptResult | undefined {
  const status = Object.hasOwn(STATUS_OF_TYPE, type) ? STATUS_OF_TYPE[type] : undefined;
  if (status === undefined) return undefined;
  const data = isRecord(event) ? event.data : undefined;
  if (!isRecord(data) || typeof data.task_id !== 'string' || data.task_id.length === 0) return undefined;
  const { error } = data;
  return new KeptResult(
    data.task_id,
    tenant,
    status,
    receivedAt,
    data.status,
    typeof data.image_url === 'string' ? data.image_url : undefined,
    isRecord(error) ? { code: error.code, message: error.message } : undefined,
  );
}

function waitedFor(
  taskId: string,
  status: unknown,
  imageUrl: string | undefined,
  error: { code: unknown; message: unknown } | undefined,
): Record<string, unknown> {
  const kept: Record<string, unknown> = { task_id: taskId, status };
  if (imageUrl !== undefined) kept.image_url = imageUrl;
  if (error !== undefined) kept.error = { code: error.code, message: error.message };
  return kept;
}

/** A result that came over a channel from another process: trust only its shape. */
export function isJobResult(value: unknown): value is JobResult {
  if (!isRecord(value) || typeof value.taskId !== 'string' || value.taskId.length === 0) return false;
  if (value.status !== 'completed' && value.status !== 'failed') return false;
  if (value.tenant !== undefined && typeof value.tenant !== 'string') return false;
  return isRecord(value.data) && value.data.task_id === value.taskId;
}

/** Carries job results between an app's instances; whoever can publish on it can wake waiters. */
export interface ResultChannel {
  /** Announces a result this instance received (not awaited: a failure is logged, waiters still poll). */
  publish(result: JobResult): void | Promise<void>;
  /** Gives every result any instance publishes to `onResult`, later failures to `onError`; called once. */
  subscribe(onResult: (result: JobResult) => void, onError: (error: unknown) => void): void | Promise<void>;
  /** Stops the subscription and frees what the channel holds; called by `receiver.close()`. */
  close?(): void | Promise<void>;
}

export function isResultChannel(value: unknown): value is ResultChannel {
  return (
    typeof value === 'object' &&
    value !== null &&
    typeof (value as ResultChannel).publish === 'function' &&
    typeof (value as ResultChannel).subscribe === 'function'
  );
}
