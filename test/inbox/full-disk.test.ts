// A full disk under sqliteInbox is answered 503 `inbox_failed` with Retry-After, never a 2xx for a
// delivery that was not stored, never a crash; once space is free again, deliveries are stored.
// The disk is a 2 MiB tmpfs of the test's own (mounted as root; skipped, saying so, where the test
// may not mount, and failed with CI=true): a real ENOSPC from the file system, which SQLite reports
// as SQLITE_FULL. SQLite's max_page_count would only simulate it, and only on a connection of the
// test's own.
import { randomUUID } from 'node:crypto';
import { rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { createReceiver } from 'jobhook';
import { sqliteDedupeStore, sqliteInbox } from 'jobhook/sqlite';
import { signDelivery } from 'jobhook/testing';
import { afterAll, describe, expect, it } from 'vitest';
import { completedPayload, SECRET } from '../fixtures.js';
import { tmpfsScratch } from '../support/mounts.js';

const scratch = tmpfsScratch('jobhook-full-disk-', '2m', 'the full-disk test');
const disk = scratch?.disk ?? '';
// Unmounted lazily: the receiver's connection to the file is still open.
afterAll(() => scratch?.remove());

describe.runIf(scratch !== undefined)('a full disk under the inbox', () => {
  it('is answered 503 with Retry-After, never 2xx, and stores again once there is room', async () => {
    const inbox = sqliteInbox({ path: join(disk, 'jobhook.db') });
    const receiver = createReceiver({
      secret: SECRET,
      inbox,
      // The dedupe store on another disk: only the inbox's writes meet the full one.
      dedupe: sqliteDedupeStore({ path: join(scratch!.dir, 'dedupe.db') }),
      logger: { warn: () => undefined, error: () => undefined },
    });
    receiver.onJobCompleted(() => undefined);
    // Half the disk taken by another file, so that a few deliveries fill the rest.
    writeFileSync(join(disk, 'filler'), Buffer.alloc(1024 * 1024));
    const padding = 'x'.repeat(64 * 1024);
    const send = () => {
      const payload = completedPayload({ id: `evt_${randomUUID()}`, padding });
      return receiver.receive({
        ...signDelivery({ secret: SECRET, payload }),
        url: 'http://127.0.0.1/webhooks',
      });
    };
    const answered: number[] = [];
    let refused: Awaited<ReturnType<typeof send>> | undefined;
    for (let i = 0; i < 100 && !refused; i++) {
      const answer = await send();
      answered.push(answer.status);
      if (answer.status !== 200) refused = answer;
    }
    expect(refused, 'the 2 MiB disk never filled').toBeDefined();
    expect(refused!.status).toBe(503);
    expect(JSON.parse(refused!.body).error.code).toBe('inbox_failed');
    expect(refused!.headers['retry-after']).toBeDefined();
    // Every 200 is a delivery on disk.
    const stored = await inbox.list({ limit: 1000 });
    expect(stored.length).toBe(answered.filter((status) => status === 200).length);

    // Room again (the filler gone): the next delivery is stored and answered 200, with no restart.
    rmSync(join(disk, 'filler'));
    expect((await send()).status).toBe(200);
    expect(await inbox.list({ limit: 1000 })).toHaveLength(stored.length + 1);
    await receiver.close();
  });
});
