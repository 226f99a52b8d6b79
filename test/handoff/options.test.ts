// Option mistakes on the pg-boss and NATS hand-offs and workers: a JobhookError invalid_options that
// names the option, before anything is sent anywhere.
import { jetstream } from '@nats-io/jetstream';
import { connect } from '@nats-io/transport-node';
import { describe, expect, it } from 'vitest';
import { createReceiver, type JobhookError } from 'jobhook';
import { natsHandoff, runNatsWorker } from 'jobhook/nats';
import { pgBossHandoff, runPgBossWorker } from 'jobhook/pg-boss';
import { SECRET } from '../support/deliveries.js';
import { NATS_URL, natsAvailable, runTag } from '../support/services.js';

const invalid = (pattern: RegExp) =>
  expect.objectContaining({
    code: 'invalid_options',
    message: expect.stringMatching(pattern),
  }) as JobhookError;

const boss = { send() {}, getJobById() {}, fetch() {}, complete() {} } as never;
const js = { publish() {}, jetstreamManager() {} } as never;
const receiver = createReceiver({ secret: SECRET });

describe('pgBossHandoff and runPgBossWorker', () => {
  it('name the option that is wrong', async () => {
    expect(() => pgBossHandoff(undefined as never)).toThrow(invalid(/pgBossHandoff: `boss` must be/));
    expect(() => pgBossHandoff({ boss, queue: 'a b' })).toThrow(invalid(/`queue`/));
    expect(() => pgBossHandoff({ boss, schema: 'x; DROP' })).toThrow(invalid(/`schema`/));
    expect(() => pgBossHandoff({ boss, timeoutMs: -1 })).toThrow(invalid(/`timeoutMs`/));
    await expect(runPgBossWorker(undefined as never, { boss })).rejects.toThrow(invalid(/receiver/));
    await expect(runPgBossWorker(receiver, { boss: undefined })).rejects.toThrow(invalid(/`boss`/));
    await expect(runPgBossWorker(receiver, { boss, concurrency: 0 })).rejects.toThrow(
      invalid(/`concurrency`/),
    );
    await expect(runPgBossWorker(receiver, { boss, pollingIntervalSeconds: 0.1 })).rejects.toThrow(
      invalid(/`pollingIntervalSeconds`/),
    );
  });

  it('lists failed events at most `limit`, a positive integer', async () => {
    await expect(pgBossHandoff({ boss }).listFailed({ limit: 0 })).rejects.toThrow(invalid(/`limit`/));
  });
});

describe('natsHandoff and runNatsWorker', () => {
  it('name the option that is wrong', async () => {
    expect(() => natsHandoff(undefined as never)).toThrow(invalid(/natsHandoff: `js` must be/));
    expect(() => natsHandoff({ js, stream: 'a.b' })).toThrow(invalid(/`stream`/));
    expect(() => natsHandoff({ js, subject: 'jobhook.>' })).toThrow(invalid(/`subject`/));
    expect(() => natsHandoff({ js, duplicateWindowMs: 0 })).toThrow(invalid(/`duplicateWindowMs`/));
    expect(() => natsHandoff({ js, timeoutMs: 0 })).toThrow(invalid(/`timeoutMs`/));
    await expect(runNatsWorker(undefined as never, { js })).rejects.toThrow(invalid(/receiver/));
    await expect(runNatsWorker(receiver, { js: undefined })).rejects.toThrow(invalid(/`js`/));
    await expect(runNatsWorker(receiver, { js, attempts: 0 })).rejects.toThrow(invalid(/`attempts`/));
    await expect(runNatsWorker(receiver, { js, backoffMs: [] })).rejects.toThrow(invalid(/`backoffMs`/));
    await expect(runNatsWorker(receiver, { js, consumer: 'a.b' })).rejects.toThrow(invalid(/`consumer`/));
  });
});

describe.runIf(await natsAvailable())('natsHandoff on a stream that does not exist', () => {
  it('refuses to list or retry rather than create it', async () => {
    const nc = await connect({ servers: NATS_URL });
    try {
      const handoff = natsHandoff({ js: jetstream(nc), stream: `JOBHOOK_NONE_${runTag()}` });
      await expect(handoff.listFailed()).rejects.toThrow(
        invalid(/there is no JetStream stream JOBHOOK_NONE_/),
      );
      await expect(handoff.retryFailed('1')).rejects.toThrow(invalid(/there is no JetStream stream/));
    } finally {
      await nc.close();
    }
  });
});
