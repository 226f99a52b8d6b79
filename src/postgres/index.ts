/**
 * A dedupe store in PostgreSQL, shared by every instance of your app:
 *
 *   import pg from 'pg';
 *   import { createReceiver } from 'jobhook';
 *   import { postgresDedupeStore } from 'jobhook/postgres';
 *
 *   const pool = new pg.Pool({ connectionString: process.env.DATABASE_URL });
 *   const receiver = createReceiver({ secret, dedupe: postgresDedupeStore({ pool }) });
 *
 * `pg` is an optional peer dependency: install it yourself; this module never loads it.
 *
 * @module jobhook/postgres
 */
export { postgresDedupeStore, type PostgresDedupeOptions, type PostgresDedupeStore } from './dedupe-store.js';
export { postgresDedupeMigration } from './dedupe-store.js';
export {
  postgresJobTracker,
  postgresJobTrackerMigration,
  type PostgresJobTracker,
  type PostgresJobTrackerOptions,
} from './job-tracker.js';
export {
  postgresInbox,
  postgresInboxMigration,
  type PostgresInbox,
  type PostgresInboxOptions,
} from './inbox.js';
