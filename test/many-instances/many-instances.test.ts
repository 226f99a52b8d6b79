// Three receiver processes behind a round-robin proxy share one dedupe store (Redis, PostgreSQL,
// or one SQLite file of this machine); the gateway simulator sends JOBHOOK_INSTANCES_JOBS jobs
// (default 1,000; the full run is 5,000) with 10 % duplicate deliveries, a second webhook for the
// same URL for part of the run, and one process is killed with SIGKILL mid-run and restarted.
// Each event's side effect must happen once, none may be missing, and every delivery must end
// answered 2xx.
//
// The hand-off variants: the three receivers queue to BullMQ on a durable Redis of the test's own,
// 2 worker processes run the handlers, and that Redis is killed (SIGKILL) and restarted mid-run;
// or to pg-boss (every connection cut mid-run) or JetStream (a nats-server of the test's own,
// stopped and restarted; test/handoff/nats-broker-crash.test.ts is the SIGKILL of the server), where
// one of the 2 workers is also killed with SIGKILL and restarted.
import { describe, expect, it } from 'vitest';
import { natsAvailable, postgresAvailable, redisAvailable } from '../support/services.js';
import { natsVariant, pgBossVariant } from './handoff-variants.js';
import { runScenario, type ScenarioResult } from './harness.js';
import { bullmqVariant, postgresVariant, redisVariant, sqliteVariant, type Variant } from './variants.js';

const JOBS = Number(process.env.JOBHOOK_INSTANCES_JOBS) || 1000;
const available = {
  redis: await redisAvailable(),
  postgres: await postgresAvailable(),
  nats: await natsAvailable(),
};

function summary(name: string, r: ScenarioResult) {
  return (
    `${name}: ${r.jobs} jobs, ${r.events} events, ${r.deliveries} deliveries (${r.duplicatedDeliveries} sent twice, ` +
    `${r.rotatedEvents} events under two webhooks), ${r.attempts} attempts; exactly once ${r.exactlyOnce}/${r.events}, ` +
    `missing ${r.missing.length}, repeated ${r.repeated.length}, unanswered ${r.unanswered.length}, ` +
    `cut by the webhook's deletion ${r.cutByDeletion}; ${JSON.stringify(r.drained)}; ${r.seconds.toFixed(1)} s`
  );
}

describe.each([
  { variant: redisVariant, on: available.redis },
  { variant: postgresVariant, on: available.postgres },
  // The processes of one machine on one file: no service to run.
  { variant: sqliteVariant, on: true },
] satisfies { variant: Variant; on: boolean }[])(
  'many instances on the $variant.name store',
  ({ variant, on }) => {
    it.runIf(on)(
      'runs each event’s side effect once across three processes, a SIGKILL, duplicates and a rotation',
      async () => {
        const result = await runScenario(variant, {
          jobs: JOBS,
          duplicateRate: 0.1,
          log: (line) => console.log(line),
        });
        console.log(summary(variant.name, result));

        expect(result.events).toBe(JOBS);
        expect(result.duplicatedDeliveries).toBeGreaterThan(0);
        expect(result.rotatedEvents).toBeGreaterThan(0);
        expect(result.missing).toEqual([]);
        expect(result.unanswered).toEqual([]);
        // The one repetition no store can prevent: the killed process performed the side effect
        // and died before it could mark the event done, so the retry ran it again. Any other
        // repetition is a failure of the store.
        for (const { pids } of result.repeated) {
          expect(pids).toHaveLength(2);
          expect(pids[0]).toBe(result.killedPid);
        }
        expect(result.exactlyOnce).toBe(result.events - result.repeated.length);
      },
      240_000,
    );
  },
);

describe.runIf(available.redis)('many instances handing off to BullMQ', () => {
  it('queues each event once across three receivers, a SIGKILL and a Redis restart; 2 workers run each once', async () => {
    const result = await runScenario(bullmqVariant, {
      jobs: JOBS,
      duplicateRate: 0.1,
      log: (line) => console.log(line),
    });
    console.log(summary(bullmqVariant.name, result));

    expect(result.events).toBe(JOBS);
    expect(result.duplicatedDeliveries).toBeGreaterThan(0);
    expect(result.rotatedEvents).toBeGreaterThan(0);
    expect(result.missing).toEqual([]);
    expect(result.unanswered).toEqual([]);
    expect(result.drained).toEqual({ failedJobs: 0 });
    // Receivers run no handler, so the SIGKILL of one cannot repeat a side effect; the workers were
    // not killed, and Redis kept every acknowledged write (fsync on each), so no job ran twice.
    expect(result.repeated).toEqual([]);
    expect(result.exactlyOnce).toBe(result.events);
  }, 300_000);
});

describe.each([
  { variant: pgBossVariant, on: available.postgres && available.redis },
  { variant: natsVariant, on: available.nats && available.redis },
] satisfies { variant: Variant; on: boolean }[])(
  'many instances handing off to $variant.name',
  ({ variant, on }) => {
    it.runIf(on)(
      'queues each event once across three receivers, a SIGKILL of each kind and a broker disruption; none missing',
      async () => {
        const result = await runScenario(variant, {
          jobs: JOBS,
          duplicateRate: 0.1,
          log: (line) => console.log(line),
        });
        console.log(summary(variant.name, result));
        console.log(
          `repeated: ${JSON.stringify(result.repeated.slice(0, 10))}, killed worker ${result.killedWorkerPid}`,
        );

        expect(result.events).toBe(JOBS);
        expect(result.duplicatedDeliveries).toBeGreaterThan(0);
        expect(result.rotatedEvents).toBeGreaterThan(0);
        expect(result.missing).toEqual([]);
        expect(result.unanswered).toEqual([]);
        expect(result.drained).toEqual({ failedJobs: 0 });
        expect(result.killedWorkerPid).toBeDefined();
        // A worker that died by itself (an unhandled rejection on a cut connection, say) would
        // have its jobs run again elsewhere: none may.
        expect(result.crashedWorkers).toEqual([]);
        // The one repetition a queue cannot prevent: the killed worker ran the handler and died before
        // it could ack the job, so another worker ran it again. Anything else is a failure.
        for (const { pids } of result.repeated) {
          expect(pids).toHaveLength(2); // a set of runs: in no order
          expect(pids).toContain(result.killedWorkerPid);
        }
        expect(result.exactlyOnce).toBe(result.events - result.repeated.length);
      },
      300_000,
    );
  },
);
