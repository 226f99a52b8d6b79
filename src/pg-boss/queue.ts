import type PgBoss from 'pg-boss';
import { backoffDelay, sleep, type Backoff } from '../common/backoff.js';
import { checkOption } from '../common/errors.js';

/** The pauses between tries at creating the queue: a random part of 100 ms, 200 ms, then 400 ms. */
export const QUEUE_CREATION_BACKOFF: Backoff = { firstMs: 100, maxMs: 400, jitter: 'full' };

/**
 * Creates the queue once (pg-boss 10 needs it before `send` and `fetch`); tries again after a
 * failure. Processes that start together on a fresh schema create it at once, and PostgreSQL may
 * end one of those `createQueue`s as a deadlock (each waits on the other's new partition): the
 * loser looks again and finds the queue the other made; any failure is tried 4 times in all.
 */
export function queueCreator(boss: PgBoss, queue: string): () => Promise<void> {
  let created: Promise<void> | undefined;
  const create = async () => {
    for (let tries = 1; ; tries++) {
      try {
        if (!(await boss.getQueue(queue))) await boss.createQueue(queue);
        return;
      } catch (error) {
        if (tries >= 4) throw error;
      }
      await sleep(backoffDelay(QUEUE_CREATION_BACKOFF, tries));
    }
  };
  return () =>
    (created ??= create().catch((error: unknown) => {
      created = undefined;
      throw error;
    }));
}

export function checkQueueName(caller: string, queue: unknown): void {
  const valid = typeof queue === 'string' && /^[\w.\-/]+$/.test(queue);
  checkOption(caller, 'queue', queue, valid, 'a pg-boss queue name (letters, digits, _ . - /)');
}
