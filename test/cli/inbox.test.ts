// `jobhook inbox list | show | replay --db <path>` through the built binary, on a SQLite inbox that
// a receiver with a wrong secret filled with refused deliveries: listed with their reason, shown
// as received, then marked for replay and run by the fixed receiver on the same file, once each,
// with context.source 'replay'. The same through --database-url: inbox-postgres.test.ts.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomUUID } from 'node:crypto';
import { createReceiver } from 'jobhook';
import { sqliteDedupeStore, sqliteInbox } from 'jobhook/sqlite';
import { signDelivery } from 'jobhook/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { completedPayload, SECRET } from '../fixtures.js';
import { BUILD_TIMEOUT_MS, ensureDist } from '../support/dist.js';
import { oneLineError, runCli } from './run-cli.js';

const dir = mkdtempSync(join(tmpdir(), 'jobhook-cli-inbox-'));
const path = join(dir, 'jobhook.db');
const WRONG_SECRET = `whsec_${Buffer.from('not-the-webhook-secret-012345678').toString('base64')}`;
const quiet = { warn: () => undefined, error: () => undefined };
const ids = [`evt_${randomUUID()}`, `evt_${randomUUID()}`];

beforeAll(async () => {
  await ensureDist();
  const inbox = sqliteInbox({ path });
  const misconfigured = createReceiver({
    secret: WRONG_SECRET,
    inbox,
    dedupe: sqliteDedupeStore({ path }),
    logger: quiet,
  });
  misconfigured.onJobCompleted(() => undefined);
  for (const id of ids) {
    const delivery = signDelivery({ secret: SECRET, payload: completedPayload({ id }) });
    expect((await misconfigured.receive({ ...delivery, url: 'http://127.0.0.1/webhooks' })).status).toBe(401);
  }
  await misconfigured.close();
  while ((await inbox.list({ status: 'refused' })).length < 2) await new Promise((r) => setTimeout(r, 10));
}, BUILD_TIMEOUT_MS);
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('jobhook inbox', () => {
  it('lists the refused deliveries with their reason', async () => {
    const result = await runCli(['inbox', 'list', '--db', path, '--status', 'refused', '--json']);
    expect(result.code).toBe(0);
    const rows = JSON.parse(result.stdout) as { status: string; reason: string }[];
    expect(rows).toHaveLength(2);
    expect(rows.every((row) => row.status === 'refused' && /^401 no_match/.test(row.reason))).toBe(true);
  });

  it('shows one as received: its signature header and body, never the secret', async () => {
    const [first] = JSON.parse((await runCli(['inbox', 'list', '--db', path, '--json'])).stdout) as {
      id: string;
    }[];
    const result = await runCli(['inbox', 'show', first!.id, '--db', path]);
    expect(result.code).toBe(0);
    expect(result.stdout).toMatch(/webhook-signature: v1,/);
    expect(result.stdout).toContain(ids[0]);
    expect(result.stdout).not.toContain(SECRET);
  });

  it('marks them for replay, and the fixed receiver on the file runs each once as a replay', async () => {
    const fixed = createReceiver({
      secret: SECRET,
      inbox: sqliteInbox({ path }),
      dedupe: sqliteDedupeStore({ path }),
      logger: quiet,
    });
    const runs: string[] = [];
    fixed.onJobCompleted((event, context) => void runs.push(`${event.id} ${context.source}`));
    const result = await runCli([
      'inbox',
      'replay',
      '--status',
      'refused',
      '--db',
      path,
      '--wait',
      '30',
      '--json',
    ]);
    expect(result.code).toBe(0);
    const rows = JSON.parse(result.stdout) as { status: string }[];
    expect(rows.map((row) => row.status)).toEqual(['handled', 'handled']);
    expect(runs.sort()).toEqual(ids.map((id) => `${id} replay`).sort());
    await fixed.close();
  });

  it('says where the inbox must be, and never makes a database at a mistyped path', async () => {
    const none = await runCli(['inbox', 'list']);
    expect(none.code).toBe(2);
    expect(oneLineError(none)).toMatch(/--db/);
    const missing = await runCli(['inbox', 'list', '--db', join(dir, 'typo.db')]);
    expect(missing.code).toBe(1);
    expect(oneLineError(missing)).toMatch(/no database at/);
  });
});
