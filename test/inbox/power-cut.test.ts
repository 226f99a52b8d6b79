// sqliteInbox answers 2xx only for what a power cut would leave on disk, and 503 when the disk's
// flush fails. The disk is an ext4 file system of the test's own on a loop device, whose blocks are a
// file on a tmpfs (mounted as root; skipped, saying so, where the test may not): a power cut is a copy
// of that file, which holds what reached the device and nothing of the OS's page cache, mounted
// again (ext4 replays its journal, SQLite its WAL) and read. Filling the tmpfs makes the device
// fail its writes while ext4 still has room: write() succeeds, the flush fails, as on a failing or
// thinly provisioned disk. With CI=true a machine where it cannot mount fails the run.
import { execFileSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import {
  closeSync,
  mkdirSync,
  mkdtempSync,
  openSync,
  rmSync,
  statfsSync,
  writeFileSync,
  writeSync,
} from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { createReceiver, type Receiver } from 'jobhook';
import { sqliteDedupeStore, sqliteInbox, type SqliteInbox } from 'jobhook/sqlite';
import { signDelivery } from 'jobhook/testing';
import { afterAll, describe, expect, it } from 'vitest';
import { completedPayload, SECRET } from '../fixtures.js';

/** better-sqlite3 as the test uses it (the package ships no types). */
interface Connection {
  prepare(sql: string): { all(...values: unknown[]): unknown[] };
  close(): void;
}
const Database = createRequire(import.meta.url)('better-sqlite3') as new (path: string) => Connection;

const scratch = mkdtempSync(join(tmpdir(), 'jobhook-power-cut-'));
const cleanups: (() => void)[] = [];
afterAll(() => {
  for (const cleanup of cleanups.reverse()) {
    try {
      cleanup();
    } catch {
      // Left for the machine's own cleanup: a loop device or mount of this run only.
    }
  }
  rmSync(scratch, { recursive: true, force: true });
});

const run = (command: string, ...args: string[]) =>
  execFileSync(command, args, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] }).trim();

/** An ext4 file system on a loop device over `image`, mounted at `at`; unmounted and detached after the file. */
function mountImage(image: string, at: string): string {
  mkdirSync(at, { recursive: true });
  const device = run('losetup', '-f', '--show', image);
  cleanups.push(() => run('losetup', '-d', device));
  // commit=60: ext4 writes nothing of its own accord during the test, so what reaches the device is
  // what was flushed; noinit_itable: nor does it zero its inode tables in the background.
  run('mount', '-t', 'ext4', '-o', 'commit=60,errors=continue,noinit_itable', device, at);
  cleanups.push(() => run('umount', '-l', at));
  return device;
}

/**
 * The device's blocks: a 48 MiB file on a tmpfs, whose pages hold the file system's metadata and
 * journal and none of its free blocks (holes punched where dumpe2fs lists them), so that once the
 * tmpfs is full the device fails the writes of data to free blocks, and only those.
 */
function makeDisk(): { backing: string; image: string; disk: string } | undefined {
  const backing = join(scratch, 'backing');
  const image = join(backing, 'disk.img');
  const disk = join(scratch, 'disk');
  try {
    mkdirSync(backing);
    run('mount', '-t', 'tmpfs', '-o', 'size=64m', 'tmpfs', backing);
    cleanups.push(() => run('umount', '-l', backing));
    writeFileSync(image, Buffer.alloc(48 * 1024 * 1024));
    // Nothing zeroed by punching holes: the journal and inode tables keep the pages written above.
    run('mkfs.ext4', '-q', '-F', '-E', 'nodiscard,lazy_itable_init=1,lazy_journal_init=1', image);
    const layout = run('dumpe2fs', image);
    const blockSize = Number(/^Block size:\s+(\d+)/m.exec(layout)![1]);
    for (const [, list] of layout.matchAll(/^[ \t]+Free blocks: (.+)$/gm)) {
      for (const range of list!.split(',')) {
        const [first, last = first] = range.trim().split('-').map(Number);
        const offset = String(first! * blockSize);
        run('fallocate', '-p', '-o', offset, '-l', String((last! - first! + 1) * blockSize), image);
      }
    }
    const device = mountImage(image, disk);
    // One page per write: the loop device completes a write that the full tmpfs took only in part
    // as a success, and what did not fit is lost with no error; a page is taken whole or not at all.
    writeFileSync(`/sys/block/${basename(device)}/queue/max_sectors_kb`, '4');
    return { backing, image, disk };
  } catch (error) {
    const why = `it mounts a tmpfs and ext4 on a loop device, which needs root, losetup, mkfs.ext4, dumpe2fs and fallocate (${String(error).split('\n')[0]})`;
    // As test/support/mounts.ts: the CI machine runs the suite as root, so there it must run.
    if (process.env.CI === 'true')
      throw new Error(`The power-cut test must run with CI=true, but ${why}`, { cause: error });
    console.warn(`Skipping the power-cut test: ${why}.`);
    return undefined;
  }
}

const made = makeDisk();
let cuts = 0;

/** The delivery ids in the inbox as a power cut now would leave it: the device's blocks copied, mounted, read. */
function afterPowerCut(inbox: SqliteInbox): Set<string> {
  const copy = join(scratch, `cut${++cuts}.img`);
  run('cp', '--sparse=always', made!.image, copy);
  const at = join(scratch, `cut${cuts}`);
  mountImage(copy, at);
  const db = new Database(join(at, 'jobhook.db'));
  try {
    const tables = db.prepare(`SELECT name FROM sqlite_master WHERE name = ?`).all(inbox.table);
    // No table: not even the file's creation reached the disk.
    if (tables.length === 0) return new Set();
    const rows = db.prepare(`SELECT delivery_id FROM "${inbox.table}"`).all() as { delivery_id: string }[];
    return new Set(rows.map((row) => row.delivery_id));
  } finally {
    db.close();
  }
}

function sender(receiver: Receiver) {
  return async (padding = '') => {
    const payload = completedPayload({ id: `evt_${randomUUID()}`, padding });
    const delivery = signDelivery({ secret: SECRET, payload });
    const answer = await receiver.receive({ ...delivery, url: 'http://127.0.0.1/webhooks' });
    return { id: delivery.id, answer };
  };
}

/** Takes the tmpfs's last free pages, so that the device fails its next writes to blocks not yet written. */
function fillBacking(): string {
  const filler = join(made!.backing, `filler-${randomUUID()}`);
  const fd = openSync(filler, 'w');
  const chunk = Buffer.alloc(64 * 1024, 1);
  try {
    for (;;) writeSync(fd, chunk);
  } catch (error) {
    if ((error as { code?: string }).code !== 'ENOSPC') throw error;
  } finally {
    closeSync(fd);
  }
  expect(statfsSync(made!.backing).bavail).toBe(0);
  return filler;
}

describe.runIf(made)('sqliteInbox and the disk', () => {
  const logged: string[] = [];
  const inbox = () => sqliteInbox({ path: join(made!.disk, 'jobhook.db') });
  const receiverOn = (box: SqliteInbox) =>
    createReceiver({
      secret: SECRET,
      inbox: box,
      // The dedupe store on another disk: only the inbox's writes meet this one. No handler: the
      // inbox runs nothing, so what reaches the device is what the answers flushed.
      dedupe: sqliteDedupeStore({ path: join(scratch, 'dedupe.db') }),
      logger: { warn: (line) => logged.push(line), error: (line) => logged.push(line) },
    });

  it('answers 2xx only for deliveries a power cut leaves on disk, one at a time and together', async () => {
    const box = inbox();
    const receiver = receiverOn(box);
    const send = sender(receiver);
    const answered: string[] = [];
    for (let i = 0; i < 5; i++) {
      const { id, answer } = await send();
      expect(answer.status).toBe(200);
      answered.push(id);
    }
    // Arriving together: one batch, or a batch and those that came during its flush.
    for (const { id, answer } of await Promise.all(Array.from({ length: 40 }, () => send()))) {
      expect(answer.status).toBe(200);
      answered.push(id);
    }
    const onDisk = afterPowerCut(box);
    expect(answered.filter((id) => !onDisk.has(id))).toEqual([]);
    await receiver.close();
  });

  it('answers 503 when the flush fails, then, once the disk writes again, 2xx only for what it holds', async () => {
    const box = inbox();
    const receiver = receiverOn(box);
    const send = sender(receiver);
    const before = await send();
    expect(before.answer.status).toBe(200);

    const filler = fillBacking();
    // 256 KiB: more than ext4 may have set aside for the WAL's growth in pages written already.
    const refused = await send('x'.repeat(256 * 1024));
    expect(refused.answer.status).toBe(503);
    expect(JSON.parse(refused.answer.body).error.code).toBe('inbox_failed');
    expect(refused.answer.headers['retry-after']).toBeDefined();
    expect(logged.join('\n')).toContain('The inbox failed');
    // Answered 503, so sent again: not kept to run beside its retry.
    const ids = (await box.list({ limit: 1000 })).map((row) => row.deliveryId);
    expect(ids).toContain(before.id);
    expect(ids).not.toContain(refused.id);

    // Room again: after a failed flush the inbox first copies the WAL into the database file
    // (a checkpoint, whose own flush may report the failure once more: 503 again, and the sender
    // retries, as a gateway does), then answers 200 again.
    rmSync(filler);
    const answered = [before.id];
    const statuses: number[] = [];
    while (answered.length < 4 && statuses.length < 10) {
      const { id, answer } = await send();
      statuses.push(answer.status);
      if (answer.status === 200) answered.push(id);
    }
    expect(answered).toHaveLength(4);
    const onDisk = afterPowerCut(box);
    expect(answered.filter((id) => !onDisk.has(id))).toEqual([]);
    await receiver.close();
  });
});
