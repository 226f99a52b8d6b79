import { JobhookError } from 'jobhook';
import { randomBytes } from 'node:crypto';
import type { JobOutcome, ResolvedGatewayOptions } from './config.js';
import { GatewayFailure, invalid, notFound, type RouteContext } from './routes.js';
import { nowIso, type Activity, type GatewayState, type TaskRecord } from './state.js';

const ASPECT_RATIO = /^[1-9]\d{0,4}:[1-9]\d{0,4}$/;
const MAX_PROMPT_LENGTH = 4000;

/** Submission, status and the job lifecycle pending -> processing -> completed | failed | unknown. */
export function imageService(
  state: GatewayState,
  options: ResolvedGatewayOptions,
  activity: Activity,
  onFinished: (task: TaskRecord) => void,
  onChange: () => void = () => undefined,
) {
  /** POST /api/v1/images/generate */
  function generate({ account, key, body }: RouteContext) {
    const model = requiredString(body, 'model', 200);
    const prompt = requiredString(body, 'prompt', MAX_PROMPT_LENGTH);
    const aspectRatio = body.aspect_ratio ?? '1:1';
    if (typeof aspectRatio !== 'string' || !ASPECT_RATIO.test(aspectRatio)) {
      throw invalid('aspect_ratio must have the form <width>:<height>, for example 16:9.');
    }
    if (options.models && !options.models.includes(model)) {
      throw invalid(`Unknown model ${JSON.stringify(model)}; available: ${options.models.join(', ')}.`);
    }
    const running = [...state.tasks.values()].filter(
      (task) => task.account_id === account.id && (task.status === 'pending' || task.status === 'processing'),
    ).length;
    if (running >= options.maxConcurrentJobs) {
      throw new GatewayFailure(
        429,
        'too_many_concurrent_jobs',
        `Too many concurrent jobs (limit ${options.maxConcurrentJobs}); retry when one finishes.`,
      );
    }
    const remaining = account.total_credits - account.used_credits;
    if (remaining < options.creditsPerImage) {
      throw new GatewayFailure(402, 'insufficient_credits', 'Not enough credits for this job.');
    }
    account.used_credits += options.creditsPerImage;
    const at = nowIso();
    const task: TaskRecord = {
      task_id: `task_${randomBytes(12).toString('hex')}`,
      account_id: account.id,
      api_key_id: key.id,
      model,
      prompt,
      aspect_ratio: aspectRatio,
      status: 'pending',
      created_at: at,
      updated_at: at,
    };
    state.tasks.set(task.task_id, task);
    if (options.autoJobs) activity.track(() => runAutomatically(task)).catch(() => undefined);
    return {
      task_id: task.task_id,
      credits_used: options.creditsPerImage,
      remaining_credits: account.total_credits - account.used_credits,
    };
  }

  /** GET /api/v1/images/{task_id}: another account's task is as absent as a missing one. */
  function get({ account, params }: RouteContext) {
    const task = state.tasks.get(params.task_id ?? '');
    if (!task || task.account_id !== account.id) throw notFound('Task not found.');
    return taskView(task);
  }

  async function runAutomatically(task: TaskRecord) {
    const running = () => task.status === 'pending' || task.status === 'processing';
    while (running()) {
      if (!(await activity.wait(options.stepMs))) return;
      // A test may have moved the task itself with advanceJob() meanwhile.
      if (running()) advance(task.task_id);
    }
  }

  /** One step of a task; `outcome` overrides `jobs.outcome` when the step ends it. */
  function advance(taskId: string, outcome?: JobOutcome): TaskRecord {
    const task = state.tasks.get(taskId);
    if (!task) throw new JobhookError('invalid_options', `No task ${taskId}.`);
    if (task.status === 'pending') {
      task.status = 'processing';
      task.updated_at = nowIso();
    } else if (task.status === 'processing') {
      finish(task, outcome ?? options.outcome({ ...task }));
    } else {
      throw new JobhookError('invalid_options', `Task ${taskId} has already ended (${task.status}).`);
    }
    onChange();
    return task;
  }

  function finish(task: TaskRecord, outcome: JobOutcome) {
    task.status = outcome.status;
    task.updated_at = nowIso();
    if (outcome.status === 'completed') {
      task.image_url = outcome.image_url ?? `https://images.gateway-simulator.invalid/${task.task_id}.png`;
    } else if (outcome.status === 'failed') {
      task.error = outcome.error ?? {
        code: 'generation_failed',
        message: 'The image could not be generated.',
      };
    }
    onFinished(task);
  }

  return { generate, get, advance };
}

/** The status answer: image_url once completed, error once failed (the simulator's choice). */
function taskView(task: TaskRecord) {
  return {
    task_id: task.task_id,
    status: task.status,
    ...(task.image_url !== undefined && { image_url: task.image_url }),
    ...(task.error !== undefined && { error: task.error }),
    created_at: task.created_at,
    updated_at: task.updated_at,
  };
}

function requiredString(body: Record<string, unknown>, name: string, max: number): string {
  const value = body[name];
  if (typeof value !== 'string' || value.trim().length === 0 || value.length > max) {
    throw invalid(`${name} must be a non-empty string of at most ${max} characters.`);
  }
  return value;
}

/** GET /api/v1/account/balances: the shape is the simulator's choice (docs/gateway-simulator.md). */
export function balances({ account }: RouteContext) {
  return {
    total_credits: account.total_credits,
    used_credits: account.used_credits,
    remaining_credits: account.total_credits - account.used_credits,
  };
}
