// The pg-boss and NATS JetStream hand-off variants of the many-instances test: three receivers
// queue, 2 worker processes (handoff-worker.ts) run the handlers, one worker is killed with
// SIGKILL mid-run and restarted, and the broker is disrupted: PostgreSQL has every connection of
// this run's processes cut (pg_terminate_backend on their application_name; the shared server is
// never restarted), and a nats-server of the test's own (JetStream on disk) is stopped and started
// again (natsVariant says why not with SIGKILL). Side effects are counted in the shared Redis, which nobody disrupts.
import { setTimeout as sleep } from 'node:timers/promises';
import { jetstreamManager, type JetStreamManager, type MsgRequest } from '@nats-io/jetstream';
import { connect } from '@nats-io/transport-node';
import pg from 'pg';
import { DATABASE_URL, REDIS_URL, redisForTest, runTag, startPrivateNats } from '../support/services.js';
import { redisEffects, type Variant } from './variants.js';

/** Polls `left` until it is 0 twice in a row, so that a job between two states is not missed. */
async function drained(left: () => Promise<number>) {
  let empty = 0;
  for (;;) {
    if ((await left()) === 0) {
      if (++empty === 2) return;
    } else empty = 0;
    await sleep(250);
  }
}

export const pgBossVariant: Variant = {
  name: 'pg-boss',
  async prepare() {
    const effects = redisForTest();
    const tag = runTag();
    const schema = `jobhook_mi_${tag}`;
    const appName = `jobhook-mi-${tag}`;
    // This process supervises: it fails the jobs of the killed worker once they expire (5 s).
    const { default: PgBoss } = await import('pg-boss');
    const boss = new PgBoss({
      connectionString: DATABASE_URL,
      schema,
      maintenanceIntervalSeconds: 1,
      schedule: false,
    });
    boss.on('error', () => undefined);
    await boss.start();
    const pool = new pg.Pool({ connectionString: DATABASE_URL, max: 2 });
    pool.on('error', () => undefined);
    const count = async (states: string) =>
      (
        await pool.query<{ n: number }>(
          `SELECT count(*)::int AS n FROM "${schema}".job WHERE name = 'jobhook' AND state IN (${states})`,
        )
      ).rows[0]!.n;
    return {
      env: {
        VARIANT: 'pg-boss',
        DATABASE_URL,
        SCHEMA: schema,
        APP_NAME: appName,
        REDIS_URL,
        PREFIX: effects.prefix,
      },
      workers: { script: './handoff-worker.ts', count: 2, kill: true },
      async disrupt(log) {
        const { rows } = await pool.query<{ cut: boolean }>(
          'SELECT pg_terminate_backend(pid) AS cut FROM pg_stat_activity WHERE application_name = $1',
          [appName],
        );
        log(
          `${rows.filter((row) => row.cut).length} PostgreSQL connections of the receivers and workers cut`,
        );
      },
      async drain(log) {
        await drained(() => count(`'created', 'retry', 'active'`));
        const failed = await count(`'failed'`);
        log(`queue drained: ${await count(`'completed'`)} completed jobs, ${failed} failed`);
        // Jobs pg-boss started more than once (a killed worker's, or an outcome that was lost):
        // with the repeated side effects, they tell a retry by pg-boss from a run twice at once.
        const { rows } = await pool.query<{ id: string; retry_count: number }>(
          `SELECT id, retry_count FROM "${schema}".job
            WHERE name = 'jobhook' AND retry_count > 0 ORDER BY started_on LIMIT 40`,
        );
        if (rows.length > 0)
          log(`jobs started again: ${rows.map((row) => `${row.id} (${row.retry_count + 1}x)`).join(', ')}`);
        return { failedJobs: failed };
      },
      effects: () => redisEffects(effects.redis, effects.prefix, 'set'),
      async cleanup() {
        await boss.stop({ graceful: false, wait: true });
        await pool.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
        await pool.end();
        await effects.cleanup();
      },
    };
  },
};

export const natsVariant: Variant = {
  name: 'nats',
  async prepare() {
    const effects = redisForTest();
    const server = await startPrivateNats();
    const tag = runTag();
    const stream = `JOBHOOK_MI_${tag}`;
    const subject = `jobhook.${tag}.events`;
    const nc = await connect({ servers: server.url, maxReconnectAttempts: -1, reconnectTimeWait: 250 });
    const jsm = await jetstreamManager(nc);
    return {
      env: {
        VARIANT: 'nats',
        NATS_URL: server.url,
        STREAM: stream,
        SUBJECT: subject,
        REDIS_URL,
        PREFIX: effects.prefix,
      },
      workers: { script: './handoff-worker.ts', count: 2, kill: true },
      async disrupt(log) {
        // Stopped, not SIGKILLed: nats-server 2.9 (Debian's, on these machines) writes a consumer's
        // state to disk after it confirmed it and has no setting to write it first (it refuses
        // `sync_interval`), so after a SIGKILL it delivers again at once the events being run at
        // that moment, and workers that did not fail run them twice; the BullMQ variant's Redis
        // keeps every write it confirmed (appendfsync always) and can be SIGKILLed.
        // docs/handoff.md says what a crash of nats-server repeats. The stop still cuts every
        // connection (acks and pulls in flight are lost, the workers recover them) and makes the
        // server forget the ids of the events that ran (the workers' done keys stop their reruns).
        await server.shutdown();
        log('nats-server stopped (SIGTERM)');
        await sleep(500);
        await server.start();
        log('nats-server restarted from its store');
      },
      async drain(log) {
        const consumer = () => jsm.consumers.info(stream, 'jobhook-workers');
        await drained(async () => {
          const info = await consumer().catch(() => undefined);
          return info ? info.num_pending + info.num_ack_pending : 1;
        });
        // Counted by subject: the stream's `messages` counts every subject, failed records or not.
        const { state } = await jsm.streams.info(stream, { subjects_filter: '>' });
        const failed = state.subjects?.[`${subject}.failed`] ?? 0;
        const left = state.subjects?.[subject] ?? 0;
        log(`queue drained: ${failed} events kept as failed, ${left} acked events left in the stream`);
        if (failed > 0) log(`why they failed: ${JSON.stringify(await failedReasons(jsm, stream, subject))}`);
        return { failedJobs: failed };
      },
      effects: () => redisEffects(effects.redis, effects.prefix, 'set'),
      async cleanup() {
        await nc.close();
        await server.stop();
        await effects.cleanup();
      },
    };
  },
};

/** The failed records' errors, counted: what the test prints when events were kept as failed. */
async function failedReasons(jsm: JetStreamManager, stream: string, subject: string) {
  const reasons: Record<string, number> = {};
  for (let seq = 1; ;) {
    const stored = await jsm.streams
      // STREAM.MSG.GET's next_by_subj, as natsHandoff's listFailed reads them.
      .getMessage(stream, { seq, next_by_subj: `${subject}.failed` } as unknown as MsgRequest)
      .catch(() => null);
    if (!stored) return reasons;
    const { error, attempts } = stored.json<{ error: string; attempts: number }>(); // a failed record's body
    const reason = `${error} (${attempts} attempts)`;
    reasons[reason] = (reasons[reason] ?? 0) + 1;
    seq = stored.seq + 1;
  }
}
