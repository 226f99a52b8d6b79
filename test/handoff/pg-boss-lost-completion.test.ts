// A pg-boss job's outcome is stored even when PostgreSQL cuts the connection that carries it.
// pg-boss's own worker sends the completion once and never waits for it: cut then, the job stayed
// `active`, expired, and ran again although its handler had succeeded (and the unhandled rejection
// ended the worker's process). The cut is made to land on the completion itself: the handler
// locks the job's row from a connection of its own, so the completion waits on that lock, and
// the test terminates the waiting backend before it lets go.
import { afterEach, describe, expect, it } from 'vitest';
import PgBoss from 'pg-boss';
import pg from 'pg';
import { createReceiver } from 'jobhook';
import { jobIdOf, pgBossHandoff, runPgBossWorker } from 'jobhook/pg-boss';
import { signDelivery } from 'jobhook/testing';
import { deferred } from '../fixtures.js';
import { completed, SECRET } from '../adapters/fixtures.js';
import { DATABASE_URL, postgresAvailable, runTag } from '../support/services.js';
import { until } from './contract.js';

const available = await postgresAvailable();
const cleanups: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup().catch(() => undefined);
});

async function client() {
  const c = new pg.Client({ connectionString: DATABASE_URL });
  await c.connect();
  cleanups.push(() => c.end());
  return c;
}

async function setup(expireInSeconds: number) {
  const schema = `jobhook_lost_${runTag()}`;
  const appName = `jobhook-lost-${runTag()}`;
  const admin = await client();
  cleanups.push(() => admin.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`));
  // The receivers' side, which also supervises: it fails and retries an expired job every second.
  const boss = new PgBoss({
    connectionString: DATABASE_URL,
    schema,
    max: 2,
    schedule: false,
    maintenanceIntervalSeconds: 1,
  });
  boss.on('error', () => undefined);
  await boss.start();
  cleanups.push(() => boss.stop({ graceful: false, wait: true }));
  // The worker's side, its connections named so that the test can cut them.
  const workerBoss = new PgBoss({
    connectionString: DATABASE_URL,
    schema,
    application_name: appName,
    max: 4,
    supervise: false,
    schedule: false,
  });
  workerBoss.on('error', () => undefined);
  await workerBoss.start();
  cleanups.push(() => workerBoss.stop({ graceful: false, wait: true }));
  const handoff = pgBossHandoff({
    boss,
    schema,
    sendOptions: { expireInSeconds, retryLimit: 2, retryDelay: 0, retryBackoff: false },
  });
  const job = async (id: string) =>
    (
      await admin.query<{ state: string; retry_count: number; output: { message?: string } | null }>(
        `SELECT state, retry_count, output FROM "${schema}".job WHERE id = $1`,
        [id],
      )
    ).rows[0];
  /** Terminates the worker's backend that waits on a row lock (the outcome being stored). */
  const cutTheWaitingConnection = async () => {
    let cut = 0;
    await until(async () => {
      const { rows } = await admin.query<{ cut: boolean }>(
        `SELECT pg_terminate_backend(pid) AS cut FROM pg_stat_activity
          WHERE application_name = $1 AND wait_event_type = 'Lock'`,
        [appName],
      );
      cut = rows.filter((row) => row.cut).length;
      return cut > 0;
    }, "the worker's outcome to wait on the row lock");
    return cut;
  };
  return { schema, handoff, workerBoss, job, cutTheWaitingConnection };
}

/** Runs in the handler: holds the job's row until `release`, so that storing its outcome waits. */
async function lockRow(locker: pg.Client, schema: string, jobId: string) {
  await locker.query('BEGIN');
  await locker.query(`SELECT 1 FROM "${schema}".job WHERE id = $1 FOR UPDATE`, [jobId]);
  return () => locker.query('ROLLBACK');
}

describe.runIf(available)('pg-boss worker: a connection cut while the outcome is stored', () => {
  it('completes a job whose completion lost its connection: the handler ran once, no retry', async () => {
    const { schema, handoff, workerBoss, job, cutTheWaitingConnection } = await setup(2);
    const locker = await client();
    const payload = completed();
    const jobId = jobIdOf(payload.id);
    let release: (() => Promise<unknown>) | undefined;
    const runs: (number | undefined)[] = [];
    const workerErrors: Error[] = [];
    const worker = await runPgBossWorker(
      createReceiver({ secret: SECRET }).onJobCompleted(async (_event, context) => {
        runs.push(context.attempt);
        if (runs.length === 1) release = await lockRow(locker, schema, jobId);
      }),
      { boss: workerBoss, pollingIntervalSeconds: 0.5, onWorkerError: (error) => workerErrors.push(error) },
    );
    cleanups.push(() => worker.close());

    const receiver = createReceiver({ secret: SECRET, handoff });
    const delivery = signDelivery({ secret: SECRET, payload });
    expect((await receiver.receive({ headers: delivery.headers, body: delivery.body })).status).toBe(200);

    expect(await cutTheWaitingConnection()).toBe(1);
    await until(() => release !== undefined, 'the handler to lock the row');
    await release!();
    await until(async () => (await job(jobId))?.state === 'completed', 'the job to complete');
    // Past the job's expiry (2 s) and two of the supervisor's rounds (1 s): nothing runs it again.
    await new Promise((resolve) => setTimeout(resolve, 4000));
    expect(runs).toEqual([1]);
    expect(await job(jobId)).toMatchObject({ state: 'completed', retry_count: 0 });
    expect(workerErrors).toEqual([]);
  }, 30_000);

  it('completes each job of a completion batch that lost its connection once', async () => {
    const { schema, handoff, workerBoss, job, cutTheWaitingConnection } = await setup(3);
    const locker = await client();
    const payloads = [completed(), completed()];
    const [lockedId, otherId] = payloads.map((payload) => jobIdOf(payload.id)) as [string, string];
    // The worker completes jobs that finished together in one statement: both are in it.
    const completions: string[][] = [];
    const complete = workerBoss.complete.bind(workerBoss);
    Object.assign(workerBoss, {
      complete: (queue: string, ids: string[]) => {
        // concat: an id given alone (not the worker's way) is recorded as a batch of one.
        completions.push(([] as string[]).concat(ids));
        return complete(queue, ids);
      },
    });
    let release: (() => Promise<unknown>) | undefined;
    const bothRunning = deferred();
    const locked = deferred();
    const runs: string[] = [];
    const workerErrors: Error[] = [];
    const worker = await runPgBossWorker(
      createReceiver({ secret: SECRET }).onJobCompleted(async (event) => {
        runs.push(event.id);
        if (runs.length === 2) bothRunning.resolve();
        await bothRunning.promise;
        // One handler locks its job's row, and both return at once, once it holds the lock.
        if (jobIdOf(event.id) === lockedId) {
          release = await lockRow(locker, schema, lockedId);
          locked.resolve();
        }
        await locked.promise;
      }),
      {
        boss: workerBoss,
        concurrency: 2,
        pollingIntervalSeconds: 0.5,
        onWorkerError: (error) => workerErrors.push(error),
      },
    );
    cleanups.push(() => worker.close());

    const receiver = createReceiver({ secret: SECRET, handoff });
    for (const payload of payloads) {
      const delivery = signDelivery({ secret: SECRET, payload });
      expect((await receiver.receive({ headers: delivery.headers, body: delivery.body })).status).toBe(200);
    }

    expect(await cutTheWaitingConnection()).toBe(1);
    expect(completions[0]?.sort()).toEqual([lockedId, otherId].sort());
    await release!();
    const state = async () => [(await job(lockedId))?.state, (await job(otherId))?.state];
    await until(async () => (await state()).every((s) => s === 'completed'), 'both jobs to complete');
    // Past the jobs' expiry (3 s) and the supervisor's rounds (1 s): nothing runs either again.
    await new Promise((resolve) => setTimeout(resolve, 4000));
    expect(runs.sort()).toEqual(payloads.map((payload) => payload.id).sort());
    expect(await job(lockedId)).toMatchObject({ state: 'completed', retry_count: 0 });
    expect(await job(otherId)).toMatchObject({ state: 'completed', retry_count: 0 });
    expect(workerErrors).toEqual([]);
  }, 30_000);

  it("stores a failed attempt whose failure lost its connection: the next attempt is the handler's retry", async () => {
    const { schema, handoff, workerBoss, job, cutTheWaitingConnection } = await setup(30);
    const locker = await client();
    const payload = completed();
    const jobId = jobIdOf(payload.id);
    let release: (() => Promise<unknown>) | undefined;
    const runs: (number | undefined)[] = [];
    const worker = await runPgBossWorker(
      createReceiver({ secret: SECRET })
        .onJobCompleted(async (_event, context) => {
          runs.push(context.attempt);
          if (runs.length === 1) {
            release = await lockRow(locker, schema, jobId);
            throw new Error('the image store is down');
          }
        })
        .onError(() => undefined),
      { boss: workerBoss, pollingIntervalSeconds: 0.5, onWorkerError: () => undefined },
    );
    cleanups.push(() => worker.close());

    const receiver = createReceiver({ secret: SECRET, handoff });
    const delivery = signDelivery({ secret: SECRET, payload });
    expect((await receiver.receive({ headers: delivery.headers, body: delivery.body })).status).toBe(200);

    expect(await cutTheWaitingConnection()).toBe(1);
    await until(() => release !== undefined, 'the handler to lock the row');
    await release!();
    // The job expires only after 30 s: a second attempt well before it is the failure, stored.
    await until(async () => (await job(jobId))?.state === 'completed', 'the retry to complete', 20_000);
    expect(runs).toEqual([1, 2]);
    expect(await job(jobId)).toMatchObject({ state: 'completed', retry_count: 1 });
  }, 30_000);
});
