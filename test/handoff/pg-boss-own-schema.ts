// A started PgBoss whose tables are in a schema of the test's own, dropped afterwards.
import PgBoss from 'pg-boss';
import pg from 'pg';
import { DATABASE_URL, runTag } from '../support/services.js';

/**
 * Starts a boss on a new schema; its stop and the schema's drop go on `cleanups` (run in reverse).
 * `schedule`: pg-boss's scheduling, as an app has it by default (it makes a queue of pg-boss's own).
 */
export async function bossOnOwnSchema(cleanups: (() => Promise<unknown>)[], { schedule = false } = {}) {
  const schema = `jobhook_own_${runTag()}`;
  cleanups.push(async () => {
    const client = new pg.Client({ connectionString: DATABASE_URL });
    await client.connect();
    await client.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
    await client.end();
  });
  const boss = new PgBoss({
    connectionString: DATABASE_URL,
    schema,
    max: 4,
    supervise: false,
    schedule,
  });
  boss.on('error', () => undefined);
  await boss.start();
  cleanups.push(() => boss.stop({ graceful: false, wait: true }));
  return { boss, schema };
}
