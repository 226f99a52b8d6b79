// pg-boss in a schema of one's own: the hand-off takes the schema from the PgBoss it is given, so
// listFailed reads that schema's job table with no `schema` option (it used to read pgboss.job),
// and a `schema` option that names another schema than the boss's is refused, naming both.
import { afterEach, describe, expect, it } from 'vitest';
import { createReceiver, type JobhookError } from 'jobhook';
import { pgBossHandoff, runPgBossWorker } from 'jobhook/pg-boss';
import { signDelivery } from 'jobhook/testing';
import { completedPayload, SECRET } from '../fixtures.js';
import { until } from './contract.js';
import { postgresAvailable } from '../support/services.js';
import { bossOnOwnSchema } from './pg-boss-own-schema.js';

const available = await postgresAvailable();
const cleanups: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

describe.runIf(available)('pgBossHandoff on a boss made with a schema of its own', () => {
  it('lists and retries the failed events of that schema without a `schema` option', async () => {
    const { boss } = await bossOnOwnSchema(cleanups);
    const handoff = pgBossHandoff({ boss, sendOptions: { retryLimit: 0 } });
    const receiver = createReceiver({ secret: SECRET, handoff });
    const payload = completedPayload();
    const delivery = signDelivery({ secret: SECRET, payload });
    expect((await receiver.receive({ headers: delivery.headers, body: delivery.body })).status).toBe(200);
    let broken = true;
    const ran: string[] = [];
    const worker = await runPgBossWorker(
      createReceiver({ secret: SECRET })
        .onJobCompleted((event) => {
          if (broken) throw new Error('the database is down');
          ran.push(event.id);
        })
        .onError(() => undefined),
      { boss, pollingIntervalSeconds: 0.5 },
    );
    cleanups.push(() => worker.close());

    await until(async () => (await handoff.listFailed()).length === 1, 'the event to fail', 10_000);
    const [failed] = await handoff.listFailed();
    expect(failed).toMatchObject({
      key: payload.id,
      attempts: 1,
      error: expect.stringMatching(/the database is down/),
    });
    broken = false;
    expect(await handoff.retryFailed(failed!.id)).toBe(true);
    await until(() => ran.length === 1, 'the retried event to run', 10_000);
    expect(await handoff.listFailed()).toEqual([]);
  });

  it('refuses a `schema` that is not the boss’s, naming both', async () => {
    const { boss, schema } = await bossOnOwnSchema(cleanups);
    expect(() => pgBossHandoff({ boss, schema: 'pgboss' })).toThrow(
      expect.objectContaining({
        code: 'invalid_options',
        message: expect.stringMatching(new RegExp(`pgBossHandoff: .*"pgboss".*"${schema}"`)),
      }) as JobhookError,
    );
    expect(() => pgBossHandoff({ boss, schema })).not.toThrow();
  });
});
