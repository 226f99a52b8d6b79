import type PgBoss from 'pg-boss';
import { backoffDelay, sleep, type Backoff } from '../common/backoff.js';
import { JobhookError } from '../common/errors.js';
import { checkOption, nameMatching } from '../common/option-checks.js';
import { quote } from '../common/logging.js';

/** The pauses between tries at creating the queue: a random part of 100 ms, 200 ms, then 400 ms. */
export const QUEUE_CREATION_BACKOFF: Backoff = { firstMs: 100, maxMs: 400, jitter: 'full' };

/** Creates the queue once, trying 4 times (processes starting together may deadlock in `createQueue`). */
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

const DEFAULT_SCHEMA = 'pgboss';

/** The schema `boss` works in (`boss.getDb().config`), unknown for a `db` of your own. */
export function bossSchema(boss: PgBoss): string | undefined {
  if (typeof boss.getDb !== 'function') return undefined;
  const config = (boss.getDb() as { config?: { schema?: unknown } } | undefined)?.config;
  return typeof config?.schema === 'string' ? config.schema : undefined;
}

/** The schema of pg-boss's tables: the boss's; the `schema` option only for a `db` of your own. */
export function schemaOf(where: string, boss: PgBoss, option: unknown): string {
  const own = bossSchema(boss);
  const schema = nameMatching(
    where,
    'schema',
    option,
    own ?? DEFAULT_SCHEMA,
    /^[A-Za-z_][A-Za-z0-9_]{0,49}$/,
    "the name of pg-boss's schema",
  );
  if (own !== undefined && schema !== own) {
    throw new JobhookError(
      'invalid_options',
      `${where}: \`schema\` is ${quote(schema)}, but the boss works in schema ${quote(own)}; leave \`schema\` out, the hand-off takes it from the boss.`,
    );
  }
  return schema;
}
