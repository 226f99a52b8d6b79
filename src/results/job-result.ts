import { isRecord } from '../common/is-record.js';

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
}

const STATUS_OF_TYPE: Readonly<Record<string, JobResult['status']>> = {
  'job.completed': 'completed',
  'job.failed': 'failed',
};

/**
 * The result an event of `type` carries, or undefined when it carries none: another event type,
 * or a payload (under a custom schema) without a string `data.task_id`.
 */
export function resultOf(type: string, event: unknown, receivedAt: number): JobResult | undefined {
  const status = Object.hasOwn(STATUS_OF_TYPE, type) ? STATUS_OF_TYPE[type] : undefined;
  if (status === undefined) return undefined;
  const data = isRecord(event) ? event.data : undefined;
  if (!isRecord(data) || typeof data.task_id !== 'string' || data.task_id.length === 0) return undefined;
  return { taskId: data.task_id, status, data: waitedFor(data), receivedAt };
}

/** The fields of `data` a waiter reads, copied, so the event itself is not kept alive. */
function waitedFor(data: Record<string, unknown>): Record<string, unknown> {
  const kept: Record<string, unknown> = { task_id: data.task_id, status: data.status };
  if (typeof data.image_url === 'string') kept.image_url = data.image_url;
  const error = data.error;
  if (isRecord(error)) kept.error = { code: error.code, message: error.message };
  return kept;
}

/** A result that came over a channel from another process: trust only its shape. */
export function isJobResult(value: unknown): value is JobResult {
  if (!isRecord(value) || typeof value.taskId !== 'string' || value.taskId.length === 0) return false;
  if (value.status !== 'completed' && value.status !== 'failed') return false;
  return isRecord(value.data) && value.data.task_id === value.taskId;
}
