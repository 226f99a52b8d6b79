// Starts pg-boss in a receiver or worker process of the many-instances test. The test cuts every
// PostgreSQL connection of its processes mid-run, and a process restarted after a SIGKILL may be
// starting just then: `boss.start()` fails, and a PgBoss whose start failed cannot be started
// again, so a new one is made and started, a few times, as a process supervisor would restart it.
import { setTimeout as sleep } from 'node:timers/promises';
import type PgBoss from 'pg-boss';

export async function startBoss(options: PgBoss.ConstructorOptions): Promise<PgBoss> {
  const { default: PgBoss } = await import('pg-boss');
  for (let tries = 1; ; tries++) {
    const boss = new PgBoss(options);
    // Connections cut mid-run are expected; the test counts the outcome.
    boss.on('error', () => undefined);
    try {
      return await boss.start();
    } catch (error) {
      // Its pool, which holds what connections it made (pg-boss's own Db has `close`).
      await (boss.getDb() as { close?: () => Promise<void> }).close?.().catch(() => undefined);
      if (tries >= 5) throw error;
      await sleep(200 * tries);
    }
  }
}
