/**
 * The simulator's options and the defaults it picks where the gateway document is silent.
 * Every choice here is written down in docs/gateway-simulator.md; keep the two in step.
 */

/** How a job ends. `unknown` ends it in the `unknown` status, which sends no delivery. */
export type JobOutcome =
  | { status: 'completed'; image_url?: string }
  | { status: 'failed'; error?: { code: string; message: string } }
  | { status: 'unknown' };

/** What a submission asked for, given to `jobs.outcome` to decide how the job ends. */
export interface JobRequest {
  task_id: string;
  model: string;
  prompt: string;
  aspect_ratio: string;
}

/** Options of {@link startGateway}; each has a default. */
export interface GatewayOptions {
  /** Credits of the account `apiKey` belongs to. Default 1,000. */
  credits?: number;
  /** Credits one image costs. Default 10. */
  creditsPerImage?: number;
  /** Accepted models; any non-empty model is accepted when absent. */
  models?: readonly string[];
  /** Requests allowed per API key per window; beyond it 429. Default 1,000 per 60 s; `false` for none. */
  rateLimit?: { requests: number; windowMs: number } | false;
  /** Jobs an account may have pending or processing at once; beyond it 429. Default 10. */
  maxConcurrentJobs?: number;
  jobs?: {
    /** `false`: tasks stay put until `gateway.advanceJob(taskId)`. Default `true`. */
    auto?: boolean;
    /** Time between the steps pending -> processing -> done of an automatic job, in ms. Default 10. */
    stepMs?: number;
    /** How each job ends. Default: completed. */
    outcome?: (job: JobRequest) => JobOutcome;
  };
  /**
   * Serve the live console at `<baseUrl>/_console`: webhooks, jobs, deliveries with each attempt,
   * and buttons to submit a job and to redeliver an event (docs/gateway-simulator.md). Off by
   * default; `jobhook gateway` turns it on. `heartbeatMs`: how often its event stream sends a
   * keep-alive comment (default 15,000).
   */
  console?: boolean | { heartbeatMs?: number };
  deliveries?: {
    /** Waits before each retry of a failed attempt, in ms; its length is the number of retries. */
    retryDelaysMs?: readonly number[];
    /** How long one attempt may take before it counts as failed, in ms. Default 5,000. */
    timeoutMs?: number;
  };
}

export interface ResolvedGatewayOptions {
  credits: number;
  creditsPerImage: number;
  models: readonly string[] | undefined;
  rateLimit: { requests: number; windowMs: number } | false;
  maxConcurrentJobs: number;
  autoJobs: boolean;
  stepMs: number;
  outcome: (job: JobRequest) => JobOutcome;
  retryDelaysMs: readonly number[];
  deliveryTimeoutMs: number;
}

/** Fast by default: the simulator serves tests, where a real gateway's hours-long schedule would stall. */
export const DEFAULT_RETRY_DELAYS_MS = [50, 100, 200, 400, 800] as const;

export function resolveGatewayOptions(options: GatewayOptions = {}): ResolvedGatewayOptions {
  return {
    credits: options.credits ?? 1000,
    creditsPerImage: options.creditsPerImage ?? 10,
    models: options.models,
    rateLimit: options.rateLimit ?? { requests: 1000, windowMs: 60_000 },
    maxConcurrentJobs: options.maxConcurrentJobs ?? 10,
    autoJobs: options.jobs?.auto ?? true,
    stepMs: options.jobs?.stepMs ?? 10,
    outcome: options.jobs?.outcome ?? (() => ({ status: 'completed' })),
    retryDelaysMs: options.deliveries?.retryDelaysMs ?? DEFAULT_RETRY_DELAYS_MS,
    deliveryTimeoutMs: options.deliveries?.timeoutMs ?? 5000,
  };
}
