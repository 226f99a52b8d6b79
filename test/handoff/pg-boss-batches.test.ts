// The pg-boss worker takes jobs in batches and completes them in batches: one fetch asks for as
// many jobs as there are free slots (never more than `concurrency` run at once), one `complete`
// carries the jobs that finished together, and a full worker asks again as soon as a slot frees.
// A worker that fetched and completed one job per statement spent most of its CPU on round trips
// (bench/NOTES.md, issue 25). The real boss's `fetch` and `complete` are wrapped to see the batches.
import { afterEach, describe, expect, it } from 'vitest';
import PgBoss from 'pg-boss';
import pg from 'pg';
import { createReceiver } from 'jobhook';
import { pgBossHandoff, runPgBossWorker } from 'jobhook/pg-boss';
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

describe.runIf(available)('pg-boss worker: batches', () => {
  it('fetches up to its free slots in one query, runs at most `concurrency`, completes together', async () => {
    const schema = `jobhook_batch_${runTag()}`;
    const admin = new pg.Client({ connectionString: DATABASE_URL });
    await admin.connect();
    cleanups.push(() => admin.end());
    cleanups.push(() => admin.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`));
    const boss = new PgBoss({ connectionString: DATABASE_URL, schema, max: 3, schedule: false });
    boss.on('error', () => undefined);
    await boss.start();
    cleanups.push(() => boss.stop({ graceful: false, wait: true }));

    const fetches: { asked: number | undefined; got: number }[] = [];
    const completions: string[][] = [];
    const fetch = boss.fetch.bind(boss);
    const complete = boss.complete.bind(boss);
    Object.assign(boss, {
      fetch: async (...args: Parameters<PgBoss['fetch']>) => {
        const jobs = await fetch(...args);
        fetches.push({ asked: args[1]?.batchSize, got: jobs.length });
        return jobs;
      },
      complete: (queue: string, ids: string[]) => {
        // concat: an id given alone (not the worker's way) is recorded as a batch of one.
        completions.push(([] as string[]).concat(ids));
        return complete(queue, ids);
      },
    });

    // Seven events queued before the worker starts.
    const receiver = createReceiver({ secret: SECRET, handoff: pgBossHandoff({ boss, schema }) });
    for (let i = 0; i < 7; i++) {
      const delivery = signDelivery({ secret: SECRET, payload: completed() });
      expect((await receiver.receive(delivery)).status).toBe(200);
    }

    let gate = deferred();
    let running = 0;
    let most = 0;
    const runs = new Map<string, number>();
    const worker = await runPgBossWorker(
      createReceiver({ secret: SECRET }).onJobCompleted(async (event) => {
        runs.set(event.id, (runs.get(event.id) ?? 0) + 1);
        most = Math.max(most, ++running);
        await gate.promise;
        running--;
      }),
      { boss, concurrency: 3, pollingIntervalSeconds: 0.5 },
    );
    cleanups.push(() => worker.close());

    await until(() => running === 3, 'three jobs to run');
    // Longer than the polling interval: a full worker does not ask PostgreSQL for more.
    await new Promise((resolve) => setTimeout(resolve, 1200));
    expect(fetches).toEqual([{ asked: 3, got: 3 }]);
    expect(running).toBe(3);

    // The three finish together: one completion for them, then one fetch for the three free slots.
    const first = gate;
    gate = deferred();
    first.resolve();
    await until(() => running === 3 && fetches.length === 2, 'the next three jobs to run');
    expect(completions).toEqual([expect.arrayContaining([expect.any(String)])]);
    expect(completions[0]).toHaveLength(3);
    expect(fetches[1]).toEqual({ asked: 3, got: 3 });

    // The last job takes one of the three free slots; the fetch that found the queue empty after it
    // is followed by the polling pause, not by a fetch per freed slot.
    const second = gate;
    gate = deferred();
    second.resolve();
    await until(() => runs.size === 7, 'the seventh job to run');
    expect(fetches[2]).toEqual({ asked: 3, got: 1 });
    gate.resolve();
    await until(async () => {
      const { rows } = await admin.query<{ n: number }>(
        `SELECT count(*)::int AS n FROM "${schema}".job WHERE state = 'completed'`,
      );
      return rows[0]!.n === 7;
    }, 'the seven jobs to complete');

    expect([...runs.values()]).toEqual([1, 1, 1, 1, 1, 1, 1]);
    expect(most).toBe(3);
    expect(completions.flat()).toHaveLength(7);
    expect(completions.length).toBeLessThanOrEqual(3);
  }, 30_000);
});
