// `jobhook inbox list | show | replay --database-url <url>` through the built binary, on a
// PostgreSQL inbox (a table in a schema of this run's own, named with --table) that a receiver with
// a wrong secret filled with refused deliveries: listed with their reason, shown as received, then
// marked for replay and run by the fixed receiver on the same table, once each, with
// context.source 'replay'. As test/cli/inbox.test.ts does for `--db`.
import { randomUUID } from 'node:crypto';
import { createReceiver } from 'jobhook';
import { postgresDedupeStore, postgresInbox } from 'jobhook/postgres';
import { signDelivery } from 'jobhook/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { completedPayload, SECRET } from '../fixtures.js';
import { BUILD_TIMEOUT_MS, ensureDist } from '../support/dist.js';
import { DATABASE_URL, postgresAvailable, postgresForTest } from '../support/services.js';
import { oneLineError, runCli } from './run-cli.js';

const WRONG_SECRET = `whsec_${Buffer.from('not-the-webhook-secret-012345678').toString('base64')}`;
const quiet = { warn: () => undefined, error: () => undefined };
const ids = [`evt_${randomUUID()}`, `evt_${randomUUID()}`];

const available = await postgresAvailable();

describe.runIf(available)('jobhook inbox --database-url', () => {
  let service: Awaited<ReturnType<typeof postgresForTest>>;
  let table: string;
  let at: string[];
  const stores = () => ({
    inbox: postgresInbox({ pool: service.pool, table }),
    dedupe: postgresDedupeStore({ pool: service.pool, table: `${service.schema}.deliveries` }),
  });

  beforeAll(async () => {
    await ensureDist();
    service = await postgresForTest();
    table = `${service.schema}.jobhook_inbox`;
    at = ['--database-url', DATABASE_URL, '--table', table];
    const { inbox, dedupe } = stores();
    const misconfigured = createReceiver({ secret: WRONG_SECRET, inbox, dedupe, logger: quiet });
    misconfigured.onJobCompleted(() => undefined);
    for (const id of ids) {
      const delivery = signDelivery({ secret: SECRET, payload: completedPayload({ id }) });
      expect((await misconfigured.receive({ ...delivery, url: 'http://127.0.0.1/webhooks' })).status).toBe(
        401,
      );
    }
    await misconfigured.close();
    while ((await inbox.list({ status: 'refused' })).length < 2) await new Promise((r) => setTimeout(r, 10));
  }, BUILD_TIMEOUT_MS);
  afterAll(() => service?.cleanup());

  it('lists the refused deliveries with their reason', async () => {
    const result = await runCli(['inbox', 'list', ...at, '--status', 'refused', '--json']);
    expect(result.stderr).toBe('');
    expect(result.code).toBe(0);
    const rows = JSON.parse(result.stdout) as { status: string; reason: string }[];
    expect(rows).toHaveLength(2);
    expect(rows.every((row) => row.status === 'refused' && /^401 no_match/.test(row.reason))).toBe(true);
  });

  it('takes the URL from JOBHOOK_DATABASE_URL too, and prints a table', async () => {
    const result = await runCli(['inbox', 'list', '--table', table], { JOBHOOK_DATABASE_URL: DATABASE_URL });
    expect(result.code).toBe(0);
    expect(result.stdout).toMatch(/^ID +STATUS +RECEIVED/);
    expect(result.stdout.match(/ refused /g)).toHaveLength(2);
  });

  it('shows one as received: its signature header and body, never the secret', async () => {
    const [first] = JSON.parse((await runCli(['inbox', 'list', ...at, '--json'])).stdout) as { id: string }[];
    const result = await runCli(['inbox', 'show', first!.id, ...at]);
    expect(result.code).toBe(0);
    expect(result.stdout).toMatch(/webhook-signature: v1,/);
    expect(result.stdout).toContain(ids[0]);
    expect(result.stdout).not.toContain(SECRET);
  });

  it('marks them for replay, and the fixed receiver on the table runs each once as a replay', async () => {
    const { inbox, dedupe } = stores();
    const fixed = createReceiver({ secret: SECRET, inbox, dedupe, logger: quiet });
    const runs: string[] = [];
    fixed.onJobCompleted((event, context) => void runs.push(`${event.id} ${context.source}`));
    const result = await runCli(['inbox', 'replay', '--status', 'refused', ...at, '--wait', '30', '--json']);
    expect(result.code).toBe(0);
    const rows = JSON.parse(result.stdout) as { status: string }[];
    expect(rows.map((row) => row.status)).toEqual(['handled', 'handled']);
    expect(runs.sort()).toEqual(ids.map((id) => `${id} replay`).sort());
    // Nothing is refused any more: a second replay marks nothing, and nothing runs again.
    const again = await runCli(['inbox', 'replay', '--status', 'refused', ...at, '--json']);
    expect(JSON.parse(again.stdout)).toEqual({ marked: 0 });
    expect(runs).toHaveLength(2);
    await fixed.close();
  });

  it('says so in one line when the table is not there, and takes one of --db and --database-url', async () => {
    // The command never creates the table: a mistyped name is an error, not a new, empty inbox.
    const missing = await runCli([
      'inbox',
      'list',
      '--database-url',
      DATABASE_URL,
      '--table',
      `${table}_typo`,
    ]);
    expect(missing.code).toBe(1);
    expect(oneLineError(missing)).toMatch(/jobhook_inbox_typo.*does not exist/);
    const both = await runCli(['inbox', 'list', '--db', 'x.db', ...at]);
    expect(both.code).toBe(2);
    expect(oneLineError(both)).toMatch(/--db.*--database-url/);
  });
});
