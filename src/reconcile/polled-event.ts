/**
 * The event a poll found: the payload a webhook would have carried, built from the task record
 * (`GET /api/v1/images/{task_id}`), so that the same schemas and handlers take it. The gateway
 * keeps no event id for a task's outcome: a polled event's `id` is `poll_<task_id>`.
 */
export interface PolledEvent {
  type: 'job.completed' | 'job.failed';
  taskId: string;
  payload: {
    id: string;
    type: 'job.completed' | 'job.failed';
    created_at: string;
    data: Record<string, unknown>;
  };
}

/** A task's terminal outcome as an event, or `undefined` while it has none. */
export function polledEvent(
  taskId: string,
  task: Record<string, unknown>,
  now: number,
): PolledEvent | undefined {
  const status = task.status;
  if (status !== 'completed' && status !== 'failed') return undefined;
  const type = status === 'completed' ? 'job.completed' : 'job.failed';
  const data: Record<string, unknown> = { ...task, task_id: taskId, status };
  // The gateway document does not show what a failed task's record holds: the event keeps its
  // promise of an `error` all the same, saying it was not given.
  if (status === 'failed' && !isError(task.error)) {
    data.error = { code: 'unknown', message: 'The gateway reported the job failed without saying why.' };
  }
  const at = typeof task.updated_at === 'string' ? task.updated_at : new Date(now).toISOString();
  return { type, taskId, payload: { id: `poll_${taskId}`, type, created_at: at, data } };
}

function isError(value: unknown): boolean {
  const error = value as { code?: unknown; message?: unknown } | null | undefined;
  return typeof error?.code === 'string' && typeof error.message === 'string';
}
