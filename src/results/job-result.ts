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
   * The event's `data` as delivered: `task_id`, `status`, and `image_url` once completed or
   * `error: { code, message }` once failed, with any other field the gateway sent.
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
  return { taskId: data.task_id, status, data, receivedAt };
}

/** A result that came over a channel from another process: trust only its shape. */
export function isJobResult(value: unknown): value is JobResult {
  if (!isRecord(value) || typeof value.taskId !== 'string' || value.taskId.length === 0) return false;
  if (value.status !== 'completed' && value.status !== 'failed') return false;
  return isRecord(value.data) && value.data.task_id === value.taskId;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
