import { isRecord } from '../common/errors.js';

/**
 * A job's outcome, as the receiver learned it from a verified, valid `job.completed` or
 * `job.failed` delivery. What `client.images.waitFor({ receiver })` is woken with.
 */
export interface JobResult {
  /** The task's id (`data.task_id`). */
  taskId: string;
  /** How the job ended. */
  status: 'completed' | 'failed';
  /**
   * What a waiter resolves with, taken from the event's `data`: `task_id`, `status`, and
   * `image_url` once completed or `error: { code, message }` once failed. Only these fields are
   * kept: results are held for waiters that start late (up to 10,000 for 60 s by default), and a
   * copy of every field of every event would let large payloads fill memory. The whole event goes
   * to your handlers.
   */
  data: Readonly<Record<string, unknown>>;
  /** When this process learned it, in ms since the epoch (the receiver's clock). */
  receivedAt: number;
  /** The tenant whose delivery carried it, for a receiver with a `secret` function. */
  tenant?: string;
}

/**
 * A key within its tenant's space: a job result's index, and a dedupe key. The tenant's length
 * leads, so that no tenant and key can be read as another pair; without a tenant (a receiver with
 * one secret) the key is as it always was.
 */
export function scopedKey(tenant: string | undefined, key: string): string {
  return tenant === undefined ? key : `tenant:${tenant.length}:${tenant}:${key}`;
}

const STATUS_OF_TYPE: Readonly<Record<string, JobResult['status']>> = {
  'job.completed': 'completed',
  'job.failed': 'failed',
};

/**
 * A result as the receiver keeps it (src/results/recent-results.ts): the fields a waiter reads,
 * copied from the event so that the event itself is not kept alive, with the {@link JobResult}
 * made of them only when something asks for it (a lookup, a watcher, the channel). Every verified
 * job event is kept for a minute and most receivers never ask: one object per result rather than
 * three (the result, its `data`, its place in the list) is less for the garbage collector to copy
 * on every delivery (bench/NOTES.md).
 */
export class KeptResult {
  #result: JobResult | undefined;

  /** What the result is found by: its task id within its tenant's space. */
  readonly key: string;

  constructor(
    readonly taskId: string,
    readonly tenant: string | undefined,
    readonly status: JobResult['status'],
    readonly receivedAt: number,
    /** `data.status`, `data.image_url` (a string) and `data.error` (`{ code, message }`) as copied. */
    private readonly dataStatus: unknown,
    private readonly imageUrl: string | undefined,
    private readonly error: { code: unknown; message: unknown } | undefined,
    result?: JobResult,
  ) {
    this.#result = result;
    this.key = scopedKey(tenant, taskId);
  }

  /** A result that came whole (over a channel from another process). */
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

  /** The result, made at the first call: the same object on every call. */
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

/**
 * The result an event of `type` carries, or undefined when it carries none: another event type,
 * or a payload (under a custom schema) without a string `data.task_id`.
 */
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

/** The fields of `data` a waiter reads (a copy, so the event itself is not kept alive). */
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
