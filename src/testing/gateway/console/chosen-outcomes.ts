import type { JobOutcome, ResolvedGatewayOptions } from '../config.js';

/**
 * Lets the console decide how one job ends ("submit a job that fails") without touching the
 * `jobs.outcome` the simulator was started with: a choice made for a task id wins once, every other
 * job still ends as configured.
 */
export function chosenOutcomes(config: ResolvedGatewayOptions) {
  const chosen = new Map<string, JobOutcome>();
  return {
    config: {
      ...config,
      outcome: (job) => {
        const outcome = chosen.get(job.task_id);
        if (!outcome) return config.outcome(job);
        chosen.delete(job.task_id);
        return outcome;
      },
    } satisfies ResolvedGatewayOptions,
    choose(taskId: string, outcome: JobOutcome): void {
      chosen.set(taskId, outcome);
    },
  };
}
