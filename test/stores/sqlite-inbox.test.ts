// jobhook/sqlite's inbox against the shared Inbox contract, each case in a table of its own in a file
// of this run's own, then what is SQLite's own: deliveries that arrive together share one commit.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { sqliteInbox } from 'jobhook/sqlite';
import { afterAll, describe, expect, it } from 'vitest';
import { inboxContract } from './inbox-contract.js';

const dir = mkdtempSync(join(tmpdir(), 'jobhook-sqlite-inbox-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
let tables = 0;

describe('sqliteInbox', () => {
  inboxContract({
    make: (options) => sqliteInbox({ path: join(dir, 'contract.db'), table: `inbox${++tables}`, ...options }),
  });

  it('stores deliveries that arrive together in one transaction, each with its own id', async () => {
    const inbox = sqliteInbox({ path: join(dir, 'batch.db') });
    const body = new TextEncoder().encode('{}');
    const one = {
      body,
      headers: {},
      url: undefined,
      receivedAt: Date.now(),
      tenant: undefined,
      type: undefined,
      deliveryId: undefined,
    };
    const ids = await Promise.all(Array.from({ length: 50 }, () => inbox.store(one)));
    expect(new Set(ids).size).toBe(50);
    expect(await inbox.list({ status: 'pending' })).toHaveLength(50);
  });

  it('refuses options it does not know, and a path that is no file', () => {
    expect(() => sqliteInbox({ path: join(dir, 'x.db'), leasMs: 1 } as never)).toThrow(/leaseMs/);
    expect(() => sqliteInbox({ path: ':memory:' })).toThrow(/path/);
  });
});
