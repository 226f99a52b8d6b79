import type PgBoss from 'pg-boss';
import { JobhookError, nameMatching } from '../common/errors.js';
import { quote } from '../common/logging.js';

/** pg-boss's own default schema. */
const DEFAULT_SCHEMA = 'pgboss';

/**
 * The schema `boss` works in. pg-boss 10 keeps its resolved configuration, `schema` included, on
 * the Db it makes (`boss.getDb().config`); a `db` of your own has none, and then it is unknown.
 */
export function bossSchema(boss: PgBoss): string | undefined {
  if (typeof boss.getDb !== 'function') return undefined;
  const config = (boss.getDb() as { config?: { schema?: unknown } } | undefined)?.config;
  return typeof config?.schema === 'string' ? config.schema : undefined;
}

/**
 * The schema of pg-boss's tables for `where`: the boss's own; the `schema` option is needed only
 * when the boss has a `db` of your own, and refused when it names another schema than the boss's.
 */
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
