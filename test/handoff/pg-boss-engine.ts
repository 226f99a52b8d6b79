// pg-boss for the hand-off contract suite: pg-boss's tables in a schema of this run's own, dropped
// afterwards.
import PgBoss from 'pg-boss';
import pg from 'pg';
import type { QueuedJobRunner } from 'jobhook/extend';
import { pgBossHandoff } from 'jobhook/pg-boss';
import { DATABASE_URL, freePort, postgresAvailable, runTag } from '../support/services.js';
import type { EngineUnderTest } from './contract.js';

/** A started boss on `schema`; with `supervise`, it fails expired jobs every second. */
async function startBoss(schema: string, supervise: boolean) {
  const boss = new PgBoss({
    connectionString: DATABASE_URL,
    schema,
    max: 4,
    supervise,
    schedule: false,
    ...(supervise && { maintenanceIntervalSeconds: 1 }),
  });
  boss.on('error', () => undefined);
  await boss.start();
  return boss;
}

export async function workerFromEnv(receiver: QueuedJobRunner, env: NodeJS.ProcessEnv) {
  const boss = await startBoss(env.SCHEMA!, false);
  return pgBossHandoff({ boss, queue: env.QUEUE! }).work(receiver, { pollingIntervalSeconds: 0.5 });
}

export const pgBoss: EngineUnderTest = {
  name: 'pg-boss',
  available: postgresAvailable,
  async open({ attempts }) {
    const schema = `jobhook_boss_${runTag()}`;
    const boss = await startBoss(schema, true);
    // A job whose worker died expires after 2 s and is retried.
    const sendOptions = { retryLimit: attempts - 1, retryDelay: 0, retryBackoff: false, expireInSeconds: 2 };
    const handoff = pgBossHandoff({ boss, sendOptions });
    const closing: (() => Promise<unknown>)[] = [
      () => boss.stop({ graceful: false, wait: true }),
      async () => {
        const client = new pg.Client({ connectionString: DATABASE_URL });
        await client.connect();
        await client.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
        await client.end();
      },
    ];
    const count = async (states: string) => {
      const { rows } = await boss
        .getDb()
        .executeSql(
          `SELECT count(*)::int AS n FROM "${schema}".job WHERE name = 'jobhook' AND state IN (${states})`,
          [],
        );
      return (rows[0] as { n: number }).n;
    };
    return {
      handoff,
      async unreachable() {
        const port = await freePort(); // nobody listens there
        const dead = new PgBoss({
          connectionString: `postgres://postgres@127.0.0.1:${port}/test`,
          schema,
          supervise: false,
          schedule: false,
        });
        dead.on('error', () => undefined);
        return pgBossHandoff({ boss: dead, schema, timeoutMs: 300 });
      },
      stored: () => count(`'created', 'retry', 'active', 'completed', 'cancelled', 'failed'`),
      pending: () => count(`'created', 'retry', 'active'`),
      startWorker: (receiver) => handoff.work(receiver, { pollingIntervalSeconds: 0.5 }),
      workerEnv: { ENGINE: 'pg-boss', SCHEMA: schema, QUEUE: 'jobhook' },
      cliArgs: ['--database-url', DATABASE_URL, '--schema', schema],
      async cleanup() {
        for (const close of closing) await close();
      },
    };
  },
};
