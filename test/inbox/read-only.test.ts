// A SQLite inbox the receiver can read but not write is answered 503 `inbox_failed` with
// Retry-After, never a 2xx, and the process lives on; once the file is writable again and the
// receiver restarted, the gateway's retry is stored and handled once. Root ignores file
// permissions, so the file is made read-only the way a volume is: a read-only bind mount (of a tmpfs
// of the test's own) through which the receiver process opens it, while a connection of the test's
// own has the same file open writable elsewhere (as another process on the file would; alone, a
// read-only WAL database does not open at all, and the receiver fails at start). SQLite then opens
// the receiver's connection read-only, and every write is SQLITE_READONLY. Skipped, saying so,
// where the test may not mount; failed with CI=true.
import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { sqliteDedupeStore, sqliteInbox } from 'jobhook/sqlite';
import { signDelivery } from 'jobhook/testing';
import { afterAll, describe, expect, it } from 'vitest';
import { completedPayload, SECRET } from '../fixtures.js';
import { startChild, stopChild, type Child } from '../many-instances/processes.js';
import { bindReadOnly, makeWritable, tmpfsScratch, unmount } from '../support/mounts.js';

const WRONG_SECRET = `whsec_${Buffer.from('not-the-webhook-secret-012345678').toString('base64')}`;
const scratch = tmpfsScratch('jobhook-read-only-', '16m', 'the read-only inbox test');
afterAll(() => scratch?.remove());

async function post(port: number, delivery: { headers: Record<string, string>; body: string | Uint8Array }) {
  const response = await fetch(`http://127.0.0.1:${port}/webhooks`, {
    method: 'POST',
    headers: delivery.headers,
    body: delivery.body as BodyInit,
  });
  return { status: response.status, headers: response.headers, body: await response.text() };
}

describe.runIf(scratch !== undefined)('a read-only SQLite inbox', () => {
  it('is answered 503 with Retry-After, never 2xx; writable again and restarted, the retry is handled once', async () => {
    const { dir, disk } = scratch!;
    const view = join(dir, 'view');
    const runs = join(dir, 'runs.txt');
    // The file, made and held open writable by the test (its tables, its WAL).
    const writable = join(disk, 'jobhook.db');
    const inbox = sqliteInbox({ path: writable });
    sqliteDedupeStore({ path: writable });
    bindReadOnly(disk, view);
    const env = {
      ENGINE: 'sqlite',
      DB_PATH: join(view, 'jobhook.db'),
      SECRET,
      RUNS_FILE: runs,
      LEASE_MS: '30000',
    };
    const children: Child[] = [];
    const start = async () => {
      const child = await startChild('../inbox/receiver-process.ts', env);
      children.push(child);
      return { child, port: Number(child.readyLine.split(' ')[1]) };
    };
    try {
      const readOnly = await start();
      const payload = completedPayload({ id: `evt_${randomUUID()}` });
      const delivery = signDelivery({ secret: SECRET, payload });
      for (let attempt = 0; attempt < 3; attempt++) {
        const answer = await post(readOnly.port, delivery);
        expect(answer.status).toBe(503);
        expect(answer.headers.get('retry-after')).toBe('5');
        expect(JSON.parse(answer.body).error.code).toBe('inbox_failed');
      }
      // A forged delivery is refused as ever; keeping it fails in the background, answered all the same.
      const forged = signDelivery({ secret: WRONG_SECRET, payload: completedPayload() });
      expect((await post(readOnly.port, forged)).status).toBe(401);
      expect((await post(readOnly.port, delivery)).status).toBe(503);
      expect(readOnly.child.process.exitCode).toBeNull();
      expect(readOnly.child.process.signalCode).toBeNull();
      // The failure is logged, with SQLite's reason.
      expect(readOnly.child.stderr()).toMatch(/inbox failed.*readonly database/);
      expect(await inbox.list()).toEqual([]);

      // The volume fixed: writable, and the receiver restarted (its connection was opened read-only).
      makeWritable(view);
      await stopChild(readOnly.child, 'SIGTERM');
      const fixed = await start();
      // The gateway's retry, the same bytes.
      expect((await post(fixed.port, delivery)).status).toBe(200);
      for (;;) {
        const [row] = await inbox.list({ status: 'handled' });
        if (row) break;
        await sleep(10);
      }
      const stored = await inbox.list();
      expect(stored.map((row) => [row.deliveryId, row.status])).toEqual([[delivery.id, 'handled']]);
      expect(readFileSync(runs, 'utf8').trim().split('\n')).toEqual([
        `${payload.id} ${fixed.child.process.pid}`,
      ]);
    } finally {
      for (const child of children) await stopChild(child, 'SIGKILL');
      unmount(view);
    }
  });
});
