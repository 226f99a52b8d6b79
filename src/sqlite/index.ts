/**
 * The dedupe store, job tracker and inbox in one SQLite file beside your app, for one machine (one
 * process, or several under pm2 or node:cluster): what was handled is still known after a restart.
 * The engine is better-sqlite3, an optional peer dependency (`npm install better-sqlite3`), loaded
 * when a store is made. Usage: `createReceiver({ secret, dedupe: sqliteDedupeStore({ path: './jobhook.db' }) })`.
 *
 * @module jobhook/sqlite
 */
export { sqliteDedupeStore, type SqliteDedupeOptions, type SqliteDedupeStore } from './dedupe-store.js';
export { sqliteInbox, type SqliteInbox, type SqliteInboxOptions } from './inbox.js';
export { sqliteJobTracker, type SqliteJobTracker, type SqliteJobTrackerOptions } from './job-tracker.js';
