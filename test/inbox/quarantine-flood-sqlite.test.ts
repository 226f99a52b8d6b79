// The quarantine of sqliteInbox under a flood (quarantine-flood.ts: its caps, small), each case on a file of its own in a folder
// of this run's own; its bytes on disk are the file's and its -wal file's.
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { sqliteDedupeStore, sqliteInbox } from 'jobhook/sqlite';
import { afterAll, describe } from 'vitest';
import { quarantineFlood } from './quarantine-flood.js';

const dir = mkdtempSync(join(tmpdir(), 'jobhook-flood-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
let made = 0;
const size = (file: string) => {
  try {
    return statSync(file).size;
  } catch {
    return 0;
  }
};

describe('the SQLite quarantine under a flood', () => {
  quarantineFlood({
    async make(options) {
      const path = join(dir, `flood${++made}.db`);
      return {
        inbox: sqliteInbox({ path, ...options }),
        dedupe: sqliteDedupeStore({ path }),
        diskBytes: async () => size(path) + size(`${path}-wal`),
      };
    },
  });
});
