import { checkOption } from '../common/errors.js';

/** What `pool` must be, for the stores on PostgreSQL. */
export const PG_POOL = 'a pg Pool, e.g. new Pool({ connectionString: process.env.DATABASE_URL })';

/** The default table name. */
export const DEFAULT_TABLE = 'jobhook_deliveries';

const IDENTIFIER = /^[A-Za-z_][A-Za-z0-9_]{0,62}$/;

/**
 * `table` or `schema.table`, each part a plain identifier, as a quoted SQL name. The name is
 * written into SQL text (identifiers cannot be bound parameters), so anything else is refused.
 */
export function quotedTable(table: string, where = 'postgresDedupeStore'): string {
  const parts = typeof table === 'string' ? table.split('.') : [];
  const valid = parts.length >= 1 && parts.length <= 2 && parts.every((part) => IDENTIFIER.test(part));
  const rule = 'a name or schema.name of letters, digits and _ (not starting with a digit, at most 63 each)';
  checkOption(where, 'table', table, valid, rule);
  return parts.map((part) => `"${part}"`).join('.');
}

/**
 * The SQL that creates the store's table and index, for schemas you manage with your own
 * migrations (then pass `createTable: false`). Safe to run more than once.
 *
 * A row is one event key: `owner` is the claim's holder and `expires_at` its lease end, or
 * `owner` is null once the event is handled and `expires_at` is when it is forgotten. A row past
 * `expires_at` counts as absent.
 */
export function postgresDedupeMigration(table: string = DEFAULT_TABLE): string {
  const name = quotedTable(table, 'postgresDedupeMigration');
  const index = `"${table.split('.').pop()!.slice(0, 50)}_expires_at_idx"`;
  return [
    `CREATE TABLE IF NOT EXISTS ${name} (`,
    `  key text PRIMARY KEY,`,
    `  owner text,`,
    `  expires_at timestamptz NOT NULL`,
    `);`,
    `CREATE INDEX IF NOT EXISTS ${index} ON ${name} (expires_at);`,
    '',
  ].join('\n');
}

/**
 * The migration behind a transaction-scoped advisory lock on the table's name: two instances
 * creating the table at once would otherwise race in the catalog (CREATE ... IF NOT EXISTS is not
 * atomic there) and one would fail. One simple query, so it runs as one implicit transaction.
 */
export function lockedMigration(table: string): string {
  quotedTable(table);
  return `SELECT pg_advisory_xact_lock(hashtext('jobhook:${table}'));\n${postgresDedupeMigration(table)}`;
}
