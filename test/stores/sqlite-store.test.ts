// jobhook/sqlite's dedupe store against the shared contract, on a real file of this run's own,
// then what is SQLite's own: the file's settings, one connection per file, its table name.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { JobhookError } from 'jobhook';
import { sqliteDedupeStore } from 'jobhook/sqlite';
import { afterAll, describe, expect, it } from 'vitest';
import { storeContract } from './store-contract.js';

const dir = mkdtempSync(join(tmpdir(), 'jobhook-sqlite-store-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const file = (name: string) => join(dir, `${name}.db`);

describe('sqliteDedupeStore', () => {
  // The store's clock, moved by the suite: real time would measure this machine's load, not the leases.
  let clock = Date.now();
  storeContract({
    make: (times) => sqliteDedupeStore({ path: file('contract'), now: () => clock, ...times }),
    pass: async (ms) => void (clock += ms),
  });

  it('keeps its leases on the real clock by default', async () => {
    const store = sqliteDedupeStore({ path: file('real-clock'), leaseMs: 50 });
    expect(store.claim('evt_1', 'a')).toBe('new');
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(store.claim('evt_1', 'b')).toBe('new');
  });

  it('remembers a handled key in the file, for a store opened on it later', () => {
    const first = sqliteDedupeStore({ path: file('remembers') });
    expect(first.claim('evt_1', 'a')).toBe('new');
    first.complete('evt_1', 'a');
    const second = sqliteDedupeStore({ path: file('remembers'), table: 'jobhook_deliveries' });
    expect(second.claim('evt_1', 'b')).toBe('done');
  });

  it('keeps tables apart in one file', () => {
    const a = sqliteDedupeStore({ path: file('tables'), table: 'a' });
    const b = sqliteDedupeStore({ path: file('tables'), table: 'b' });
    expect(a.claim('evt_1', 'x')).toBe('new');
    expect(b.claim('evt_1', 'y')).toBe('new');
  });

  it.each(['x; DROP TABLE users', 'a.b', '"quoted"', '1table', '', 'a'.repeat(64)])(
    'refuses the table name %j (names are written into SQL text)',
    (name) => {
      expect(() => sqliteDedupeStore({ path: file('names'), table: name })).toThrow(JobhookError);
    },
  );

  it.each(['', ':memory:', undefined])('refuses %j for a path: the store is a file', (path) => {
    expect(() => sqliteDedupeStore({ path: path as string })).toThrow(/path/);
  });

  it('tells a directory that does not exist when it is made, not at the first delivery', () => {
    expect(() => sqliteDedupeStore({ path: join(dir, 'absent', 'x.db') })).toThrow(
      /cannot open the database/,
    );
  });
});
