// Workers and receivers that start together on a fresh pg-boss schema all create the queue at
// once; PostgreSQL ends most of those concurrent `createQueue`s as deadlocks (each waits on
// another's new partition of the job table). Every one of them must still start: the worker of a
// many-instances run died at start-up of it.
import { afterEach, describe, expect, it } from 'vitest';
import PgBoss from 'pg-boss';
import { createReceiver } from 'jobhook';
import { pgBossHandoff, runPgBossWorker } from 'jobhook/pg-boss';
import { signDelivery } from 'jobhook/testing';
import { completed, SECRET } from '../adapters/fixtures.js';
import { DATABASE_URL, postgresAvailable, runTag } from '../support/services.js';

const available = await postgresAvailable();
const cleanups: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup().catch(() => undefined);
});

async function bosses(schema: string, count: number) {
  const started: PgBoss[] = [];
  // One at a time: pg-boss's own schema migration is not what this test is about.
  for (let i = 0; i < count; i++) {
    const boss = new PgBoss({
      connectionString: DATABASE_URL,
      schema,
      max: 2,
      supervise: false,
      schedule: false,
    });
    boss.on('error', () => undefined);
    await boss.start();
    cleanups.push(() => boss.stop({ graceful: false, wait: true }));
    started.push(boss);
  }
  cleanups.unshift(() => started[0]!.getDb().executeSql(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`, []));
  return started;
}

describe.runIf(available)('pg-boss: the queue created by several processes at once', () => {
  it('starts four workers at once on a fresh schema', async () => {
    const schema = `jobhook_create_${runTag()}`;
    const receiver = createReceiver({ secret: SECRET });
    const started = await Promise.allSettled(
      (await bosses(schema, 4)).map(async (boss) => {
        const worker = await runPgBossWorker(receiver, { boss, onWorkerError: () => undefined });
        cleanups.push(() => worker.close());
      }),
    );
    expect(started.filter((result) => result.status === 'rejected')).toEqual([]);
  }, 30_000);

  it('stores the first deliveries of four receivers at once on a fresh schema', async () => {
    const schema = `jobhook_create_${runTag()}`;
    const answers = await Promise.all(
      (await bosses(schema, 4)).map((boss) => {
        const receiver = createReceiver({ secret: SECRET, handoff: pgBossHandoff({ boss, schema }) });
        const delivery = signDelivery({ secret: SECRET, payload: completed() });
        return receiver.receive({ headers: delivery.headers, body: delivery.body });
      }),
    );
    expect(answers.map((answer) => answer.status)).toEqual([200, 200, 200, 200]);
  }, 30_000);
});
