/**
 * PostgreSQL for receivers shared by several instances: `postgresDedupeStore({ pool })`,
 * `postgresJobTracker`. `pg` is an optional peer dependency this module never loads.
 *
 * @module jobhook/postgres
 */
export {
  postgresDedupeStore,
  type PostgresDedupeOptions,
  type PostgresDedupeStore,
  type PostgresQueryable,
} from './dedupe-store.js';
export { postgresDedupeMigration } from './dedupe-store.js';
export {
  postgresJobTracker,
  postgresJobTrackerMigration,
  type PostgresJobTracker,
  type PostgresJobTrackerOptions,
} from './job-tracker.js';
export type { JobTracker, TrackedJob } from '../tracker/job-tracker.js';
export type { DedupeStore, ClaimResult } from '../dedupe/dedupe-store.js';
