// Option mistakes on the pg-boss and NATS hand-offs and workers: a JobhookError invalid_options that
// names the option, before anything is sent anywhere.
import { jetstream } from '@nats-io/jetstream';
import { connect } from '@nats-io/transport-node';
import { describe, expect, it } from 'vitest';
import { createReceiver } from 'jobhook';
import { natsHandoff, runNatsWorker } from 'jobhook/nats';
import { pgBossHandoff, runPgBossWorker } from 'jobhook/pg-boss';
import { SECRET } from '../support/deliveries.js';
import { NATS_URL, natsAvailable, runTag } from '../support/services.js';
import { invalidOptions } from './recording-receiver.js';

const boss = { send() {}, getJobById() {}, fetch() {}, complete() {} } as never;
const js = { publish() {}, jetstreamManager() {} } as never;
const receiver = createReceiver({ secret: SECRET });

describe('pgBossHandoff and runPgBossWorker', () => {
  it('name the option that is wrong', async () => {
    expect(() => pgBossHandoff(undefined as never)).toThrow(invalidOptions(/pgBossHandoff: `boss` must be/));
    expect(() => pgBossHandoff({ boss, queue: 'a b' })).toThrow(invalidOptions(/`queue`/));
    expect(() => pgBossHandoff({ boss, schema: 'x; DROP' })).toThrow(invalidOptions(/`schema`/));
    expect(() => pgBossHandoff({ boss, timeoutMs: -1 })).toThrow(invalidOptions(/`timeoutMs`/));
    await expect(runPgBossWorker(undefined as never, { boss })).rejects.toThrow(invalidOptions(/receiver/));
    await expect(runPgBossWorker(receiver, { boss: undefined })).rejects.toThrow(invalidOptions(/`boss`/));
    await expect(runPgBossWorker(receiver, { boss, concurrency: 0 })).rejects.toThrow(
      invalidOptions(/`concurrency`/),
    );
    await expect(runPgBossWorker(receiver, { boss, pollingIntervalSeconds: 0.1 })).rejects.toThrow(
      invalidOptions(/`pollingIntervalSeconds`/),
    );
  });

  it('lists failed events at most `limit`, a positive integer', async () => {
    await expect(pgBossHandoff({ boss }).listFailed({ limit: 0 })).rejects.toThrow(invalidOptions(/`limit`/));
  });
});

describe('natsHandoff and runNatsWorker', () => {
  it('name the option that is wrong', async () => {
    expect(() => natsHandoff(undefined as never)).toThrow(invalidOptions(/natsHandoff: `js` must be/));
    expect(() => natsHandoff({ js, stream: 'a.b' })).toThrow(invalidOptions(/`stream`/));
    expect(() => natsHandoff({ js, subject: 'jobhook.>' })).toThrow(invalidOptions(/`subject`/));
    expect(() => natsHandoff({ js, duplicateWindowMs: 0 })).toThrow(invalidOptions(/`duplicateWindowMs`/));
    expect(() => natsHandoff({ js, timeoutMs: 0 })).toThrow(invalidOptions(/`timeoutMs`/));
    await expect(runNatsWorker(undefined as never, { js })).rejects.toThrow(invalidOptions(/receiver/));
    await expect(runNatsWorker(receiver, { js: undefined })).rejects.toThrow(invalidOptions(/`js`/));
    await expect(runNatsWorker(receiver, { js, attempts: 0 })).rejects.toThrow(invalidOptions(/`attempts`/));
    await expect(runNatsWorker(receiver, { js, backoffMs: [] })).rejects.toThrow(
      invalidOptions(/`backoffMs`/),
    );
    await expect(runNatsWorker(receiver, { js, consumer: 'a.b' })).rejects.toThrow(
      invalidOptions(/`consumer`/),
    );
  });
});

describe.runIf(await natsAvailable())('natsHandoff on a stream that does not exist', () => {
  it('refuses to list or retry rather than create it', async () => {
    const nc = await connect({ servers: NATS_URL });
    try {
      const handoff = natsHandoff({ js: jetstream(nc), stream: `JOBHOOK_NONE_${runTag()}` });
      await expect(handoff.listFailed()).rejects.toThrow(
        invalidOptions(/there is no JetStream stream JOBHOOK_NONE_/),
      );
      await expect(handoff.retryFailed('1')).rejects.toThrow(invalidOptions(/there is no JetStream stream/));
    } finally {
      await nc.close();
    }
  });
});
