// Three receiver processes reconcile from one tracker, on Redis and again on Postgres: 1,000 jobs
// (JOBHOOK_RECONCILE_JOBS), half the deliveries dropped and none retried, one process SIGKILLed
// and restarted mid-run. Every outcome is handled, once; each task is polled by at most one
// instance at a time; the gateway answered no 429.
import { describe, expect, it } from 'vitest';
import { postgresAvailable, redisAvailable } from '../support/services.js';
import { runScenario, type VariantName } from './instances-scenario.js';

const JOBS = Number(process.env.JOBHOOK_RECONCILE_JOBS) || 1000;
const available = { redis: await redisAvailable(), postgres: await postgresAvailable() };

describe.each(['redis', 'postgres'] satisfies VariantName[])(
  'three receivers reconciling on %s',
  (variant) => {
    it.runIf(available[variant])(
      'handles every outcome once, by webhook or by poll, with no task polled twice at once and no 429',
      async () => {
        const r = await runScenario(variant, { jobs: JOBS, log: (line) => console.log(line) });
        const byPoll = [...r.runs.values()].filter((runs) =>
          runs.some((run) => run.endsWith(':poll')),
        ).length;
        console.log(
          `${variant}: ${r.tasks.length} jobs, ${r.dropped.size} deliveries dropped, ${byPoll} outcomes by poll, ` +
            `${[...r.polls.values()].flat().length} polls, ${r.seconds.toFixed(1)} s`,
        );
        if (r.stillTracked.length > 0)
          console.log('still tracked:', JSON.stringify(r.stillTracked.slice(0, 10)));
        expect(r.tasks).toHaveLength(JOBS);
        expect(r.dropped.size).toBeGreaterThan(JOBS / 4);
        expect(r.tasks.filter((task) => !r.runs.has(task))).toEqual([]);
        // The one repetition no store can prevent: the killed process ran the handler and died
        // before it could mark the outcome done, so another ran it again.
        for (const task of r.tasks) {
          const runs = r.runs.get(task)!;
          if (runs.length > 1) {
            const runsOf =
              `task ${task} ran ${JSON.stringify(runs)}; the killed pid was ${r.killedPid}; ` +
              `the receivers' stderr: ${JSON.stringify(r.stderr)}`;
            expect(runs, runsOf).toHaveLength(2);
            expect(runs[0]!.split(':')[0], runsOf).toBe(r.killedPid);
          }
        }
        // An outcome whose delivery was dropped can only have come by poll.
        for (const task of r.dropped) expect(r.runs.get(task)!.at(-1)).toMatch(/:poll$/);
        // Each task's polls never overlap in time (a SIGKILLed instance's unfinished poll is not recorded).
        for (const [task, polls] of r.polls) {
          const sorted = [...polls].sort((a, b) => a[1] - b[1]);
          for (let i = 1; i < sorted.length; i++) {
            expect(sorted[i]![1], `task ${task} polled by two at once`).toBeGreaterThanOrEqual(
              sorted[i - 1]![2],
            );
          }
        }
        expect(r.rateLimited).toEqual([]);
        expect(r.pendingAfter).toBe(0);
      },
      300_000,
    );
  },
);
