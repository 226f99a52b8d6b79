// A receiver with sqliteInbox (and sqliteDedupeStore beside it, in the same file), each case on a
// file of its own in a folder of this run's own.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createRequire } from 'node:module';
import { sqliteDedupeStore, sqliteInbox, type SqliteInbox } from 'jobhook/sqlite';
import { afterAll, describe } from 'vitest';
import { receiverWithInbox } from './receiver-suite.js';

const dir = mkdtempSync(join(tmpdir(), 'jobhook-sqlite-receiver-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
let made = 0;

/** better-sqlite3 as the test uses it (the package ships no types). */
interface Connection {
  prepare(sql: string): { get(...values: unknown[]): unknown; run(...values: unknown[]): unknown };
  close(): void;
}
const Database = createRequire(import.meta.url)('better-sqlite3') as new (path: string) => Connection;

describe('sqliteInbox in a receiver', () => {
  receiverWithInbox({
    async make(options) {
      const path = join(dir, `inbox${++made}.db`);
      return { inbox: sqliteInbox({ path, ...options }), dedupe: sqliteDedupeStore({ path }) };
    },
    async tamper(inbox, id) {
      // Another connection, as an editor of the file on disk would be.
      const { path, table } = inbox as SqliteInbox;
      const db = new Database(path);
      const { body } = db.prepare(`SELECT body FROM "${table}" WHERE id = ?`).get(Number(id)) as {
        body: Buffer;
      };
      body[10] = (body[10]! + 1) % 256;
      db.prepare(`UPDATE "${table}" SET body = ? WHERE id = ?`).run(body, Number(id));
      db.close();
    },
  });
});
