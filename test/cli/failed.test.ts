// `jobhook failed list` and `jobhook failed retry <id|--all>` on every hand-off engine, through
// the built binary: events kept as failed are listed with their error, a retry runs the handlers
// once more, and retrying one that ran meanwhile runs nothing (exit 1, it is not failed any more).
import { Queue } from 'bullmq';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createReceiver } from 'jobhook';
import { signDelivery } from 'jobhook/testing';
import { completed, SECRET } from '../adapters/fixtures.js';
import { until, type EngineUnderTest, type OpenEngine } from '../handoff/contract.js';
import { bullmq } from '../handoff/bullmq-engine.js';
import { nats } from '../handoff/nats-engine.js';
import { pgBoss } from '../handoff/pg-boss-engine.js';
import { BUILD_TIMEOUT_MS, ensureDist } from '../support/dist.js';
import { DATABASE_URL, REDIS_URL, redisForTest, runTag } from '../support/services.js';
import { oneLineError, runCli } from './run-cli.js';

const engines = await Promise.all(
  [bullmq, pgBoss, nats].map(async (engine) => ({
    name: engine.name,
    engine,
    available: await engine.available(),
  })),
);

/**
 * The bound on a test, against a hang: it runs the built command several times and waits for a
 * broker, each many times slower on a busy machine. The build is made before, in its own hook.
 */
const HANG_MS = 300_000;

beforeAll(ensureDist, BUILD_TIMEOUT_MS);

const cleanups: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/** Two events whose handler fails (one attempt each), kept as failed; `fix()` mends the handler. */
async function twoFailed(engine: EngineUnderTest) {
  const opened: OpenEngine = await engine.open({ attempts: 1 });
  cleanups.push(() => opened.cleanup());
  const receiver = createReceiver({ secret: SECRET, handoff: opened.handoff });
  const payloads = [completed(), completed()];
  for (const payload of payloads) {
    const delivery = signDelivery({ secret: SECRET, payload });
    expect((await receiver.receive({ headers: delivery.headers, body: delivery.body })).status).toBe(200);
  }
  let broken = true;
  const handled: string[] = [];
  const worker = await opened.startWorker(
    createReceiver({ secret: SECRET })
      .onJobCompleted((event) => {
        if (broken) throw new Error('the database is down');
        handled.push(event.id);
      })
      .onError(() => undefined),
  );
  cleanups.push(() => worker.close());
  await until(async () => (await opened.handoff.listFailed()).length === 2, 'both events to fail');
  return { opened, payloads, handled, fix: () => (broken = false) };
}

describe.each(engines)('jobhook failed on $name', ({ engine, available }) => {
  it.runIf(available)(
    'lists the failed events and retries one by id, then the rest with --all',
    async () => {
      const { opened, payloads, handled, fix } = await twoFailed(engine);

      const listed = await runCli(['failed', 'list', ...opened.cliArgs]);
      expect(listed.stderr).toBe('');
      expect(listed.code).toBe(0);
      const [header, ...rows] = listed.stdout.trimEnd().split('\n');
      expect(header).toMatch(/^ID\s+TYPE\s+EVENT\s+ATTEMPTS\s+FAILED AT\s+ERROR$/);
      expect(rows).toHaveLength(2);
      for (const payload of payloads) expect(listed.stdout).toContain(payload.id);
      expect(rows[0]).toMatch(/job\.completed .* 1 .*the database is down/);

      const json = await runCli(['failed', 'list', '--json', ...opened.cliArgs]);
      const events = JSON.parse(json.stdout) as { id: string; key: string; payload: unknown }[];
      expect(events.map((event) => event.key).sort()).toEqual(payloads.map((p) => p.id).sort());
      expect(events[0]!.payload).toEqual(payloads.find((p) => p.id === events[0]!.key));

      fix();
      const one = await runCli(['failed', 'retry', events[0]!.id, ...opened.cliArgs]);
      expect(one.stdout).toBe(`Retried ${events[0]!.id}.\n`);
      await until(() => handled.length === 1, 'the retried event to run');
      expect(handled).toEqual([events[0]!.key]);

      // Retried again after it ran: nothing runs, and the command says so.
      const again = await runCli(['failed', 'retry', events[0]!.id, ...opened.cliArgs]);
      expect(again.code).toBe(1);
      expect(oneLineError(again)).toBe(`jobhook: no failed event "${events[0]!.id}"`);

      const all = await runCli(['failed', 'retry', '--all', ...opened.cliArgs]);
      expect(all.stdout).toBe('Retried 1 failed event.\n');
      await until(async () => handled.length === 2 && (await opened.pending()) === 0, 'the rest to run');
      expect(handled.sort()).toEqual(payloads.map((p) => p.id).sort());
      expect((await runCli(['failed', 'list', ...opened.cliArgs])).stdout).toBe('No failed events.\n');
    },
    HANG_MS,
  );
});

describe('jobhook failed: the command line', () => {
  it(
    'needs exactly one place, and an id or --all',
    async () => {
      const none = await runCli(['failed', 'list']);
      expect(none.code).toBe(2);
      expect(oneLineError(none)).toMatch(/--redis-url \(BullMQ\), --database-url \(pg-boss\) or --nats-url/);
      const two = await runCli(['failed', 'list', '--redis-url', 'redis://x', '--nats-url', 'nats://x']);
      expect(oneLineError(two)).toMatch(/one of --redis-url, --database-url and --nats-url/);
      const neither = await runCli(['failed', 'retry', '--redis-url', 'redis://x']);
      expect(oneLineError(neither)).toMatch(/needs one event id, or --all/);
      expect((await runCli(['failed', '--help'])).stdout).toMatch(/^Usage: jobhook failed/);
    },
    HANG_MS,
  );

  it(
    'names an unreachable service without its URL (which may hold a password)',
    async () => {
      const result = await runCli([
        'failed',
        'list',
        '--database-url',
        'postgres://u:hunter2@127.0.0.1:1/db',
      ]);
      expect(result.code).toBe(1);
      const line = oneLineError(result);
      expect(line).toMatch(/^jobhook: could not reach PostgreSQL/);
      expect(line).not.toContain('hunter2');
    },
    HANG_MS,
  );

  it.runIf(engines.find((e) => e.engine === bullmq)!.available)(
    'says plainly that no BullMQ queue is under the prefix, and names the prefix that holds it',
    async () => {
      await ensureDist();
      const service = redisForTest();
      cleanups.push(() => service.cleanup());
      const prefix = service.prefix.slice(0, -1); // BullMQ adds the ':' itself
      const name = `jobhook-${runTag()}`; // a name of this run's own: no other test's queue is listed
      const queue = new Queue(name, { connection: { url: REDIS_URL }, prefix });
      cleanups.push(() => queue.close());
      await queue.waitUntilReady();
      await until(async () => (await service.redis.exists(`${prefix}:${name}:meta`)) === 1, 'the meta key');

      const elsewhere = await runCli(['failed', 'list', '--redis-url', REDIS_URL, '--queue', name]);
      expect(elsewhere.code).toBe(1);
      expect(oneLineError(elsewhere)).toBe(
        `jobhook: there is no BullMQ queue "${name}" under prefix "bull" in this Redis ` +
          `(a queue of that name is under prefix "${prefix}": pass --prefix)`,
      );
      const nowhere = await runCli(['failed', 'list', '--redis-url', REDIS_URL, '--queue', `${name}-x`]);
      expect(oneLineError(nowhere)).toMatch(
        /no prefix of this Redis holds a queue named .*: pass --queue\)$/,
      );
      // The command wrote nothing: the queue it looked for still does not exist.
      expect(await service.redis.exists(`bull:${name}-x:meta`)).toBe(0);

      const found = await runCli([
        'failed',
        'list',
        '--redis-url',
        REDIS_URL,
        '--queue',
        name,
        '--prefix',
        prefix,
      ]);
      expect(found).toMatchObject({ code: 0, stdout: 'No failed events.\n' });
    },
    120_000,
  );

  it.runIf(engines.find((e) => e.engine === pgBoss)!.available)(
    'says plainly that a schema holds no pg-boss, and names the schemas that do',
    async () => {
      const opened = await pgBoss.open({ attempts: 1 });
      cleanups.push(() => opened.cleanup());
      const schema = opened.cliArgs[opened.cliArgs.indexOf('--schema') + 1]!;
      const missing = `jobhook_none_${runTag()}`;
      const result = await runCli(['failed', 'list', '--database-url', DATABASE_URL, '--schema', missing]);
      expect(result.code).toBe(1);
      const line = oneLineError(result);
      expect(line).toMatch(
        new RegExp(`^jobhook: there is no pg-boss in schema "${missing}" of this database`),
      );
      expect(line).toContain(schema);
      expect(line).not.toMatch(/could not reach/);
    },
    HANG_MS,
  );
});
