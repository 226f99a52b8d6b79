// A JetStream worker whose ack is lost on the way (the link to the server goes down with it in
// flight, as when nats-server restarts) sends it again once it is reconnected: the event's
// handlers ran once and it is not given to a worker again after ack_wait. Without the resend the
// server, which never saw the ack, delivers the event again (whose key the worker then finds done).
import { jetstream, jetstreamManager } from '@nats-io/jetstream';
import { connect } from '@nats-io/transport-node';
import { afterEach, describe, expect, it } from 'vitest';
import { createReceiver } from 'jobhook';
import { natsHandoff, runNatsWorker } from 'jobhook/nats';
import { signDelivery } from 'jobhook/testing';
import { completedPayload, deferred, SECRET } from '../fixtures.js';
import { startLossyLink } from '../support/lossy-link.js';
import { NATS_URL, natsAvailable, runTag } from '../support/services.js';
import { until } from './contract.js';

const available = await natsAvailable();
const cleanups: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup().catch(() => undefined);
});

describe.runIf(available)('runNatsWorker when an ack is lost', () => {
  it('acks again after the reconnect: the event runs once and is not redelivered', async () => {
    const tag = runTag();
    const stream = `JOBHOOK_${tag}`;
    const subject = `jobhook.${tag}.events`;
    const nc = await connect({ servers: NATS_URL });
    const jsm = await jetstreamManager(nc);
    cleanups.push(() => nc.close());
    cleanups.push(() => jsm.streams.delete(stream));
    cleanups.push(() => jsm.streams.delete(`${stream}_DONE`));
    const receiver = createReceiver({
      secret: SECRET,
      handoff: natsHandoff({ js: jetstream(nc), stream, subject }),
    });

    const link = await startLossyLink(Number(new URL(NATS_URL).port || 4222));
    cleanups.push(() => link.close());
    const workerConnection = await connect({
      servers: `127.0.0.1:${link.port}`,
      maxReconnectAttempts: -1,
      reconnectTimeWait: 50,
    });
    cleanups.push(() => workerConnection.close());
    const started = deferred();
    const finish = deferred();
    const runs: string[] = [];
    const workerErrors: string[] = [];
    const worker = await runNatsWorker(
      createReceiver({ secret: SECRET }).onJobCompleted(async (event) => {
        runs.push(event.id);
        started.resolve();
        await finish.promise;
      }),
      {
        js: jetstream(workerConnection),
        stream,
        subject,
        ackWaitMs: 2000,
        onWorkerError: (error) => void workerErrors.push(error.message),
      },
    );
    cleanups.push(() => worker.close());

    const payload = completedPayload();
    const delivery = signDelivery({ secret: SECRET, payload });
    expect((await receiver.receive({ headers: delivery.headers, body: delivery.body })).status).toBe(200);
    await started.promise;
    // The handler succeeds; its ack is dropped on the way and the connection cut behind it.
    const lost = link.loseNext('+ACK');
    finish.resolve();
    await lost;

    const pending = async () => {
      const info = await jsm.consumers.info(stream, 'jobhook-workers');
      return info.num_pending + info.num_ack_pending;
    };
    // Without the resend this waits for ack_wait to run out, the redelivery and its run.
    await until(async () => (await pending()) === 0, 'the event to be acked');
    expect(runs).toEqual([payload.id]);
    // Delivered once: the ack landed; the server did not give the event out again.
    expect((await jsm.consumers.info(stream, 'jobhook-workers')).delivered.consumer_seq).toBe(1);
    expect(workerErrors).toEqual([]);
    expect((await jsm.streams.info(stream)).state.messages).toBe(0);
  });
});
