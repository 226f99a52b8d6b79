// A worker whose handlers succeeded writes the event's done key, then acks. When the key's write is
// lost with the link (nats-server restarting, a connection cut), the worker writes it again once
// reconnected, and all the while tells the server it is still on the event: the event's ack wait
// must not run out meanwhile, or the server gives it to another worker, which finds no done key
// and runs the handlers a second time (seen in the many-instances test across a nats-server restart).
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

describe.runIf(available)('runNatsWorker when the write of a done key is lost', () => {
  it('writes it again and keeps the event: no other worker runs it', async () => {
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
    const ackWaitMs = 1000;
    const runs: string[] = [];
    const workerErrors: string[] = [];
    const workerOptions = {
      stream,
      subject,
      ackWaitMs,
      onWorkerError: (error: Error) => void workerErrors.push(error.message),
    };

    // Worker A, over a link that can lose a write, with one slot: busy with the event until it
    // is acked, so only worker B could take a redelivery.
    const link = await startLossyLink(Number(new URL(NATS_URL).port || 4222));
    cleanups.push(() => link.close());
    const connectionA = await connect({
      servers: `127.0.0.1:${link.port}`,
      maxReconnectAttempts: -1,
      reconnectTimeWait: 50,
    });
    cleanups.push(() => connectionA.close());
    const started = deferred();
    const finish = deferred();
    const workerA = await runNatsWorker(
      createReceiver({ secret: SECRET }).onJobCompleted(async (event) => {
        runs.push(`A:${event.id}`);
        started.resolve();
        await finish.promise;
      }),
      { ...workerOptions, js: jetstream(connectionA), concurrency: 1 },
    );
    cleanups.push(() => workerA.close());

    const payload = completedPayload();
    const delivery = signDelivery({ secret: SECRET, payload });
    expect((await receiver.receive({ headers: delivery.headers, body: delivery.body })).status).toBe(200);
    await started.promise;
    const workerB = await runNatsWorker(
      createReceiver({ secret: SECRET }).onJobCompleted((event) => void runs.push(`B:${event.id}`)),
      { ...workerOptions, js: jetstream(nc) },
    );
    cleanups.push(() => workerB.close());

    // The handler succeeds; the write of its done key is dropped and the connection cut behind it.
    const lost = link.loseNext('.done.');
    finish.resolve();
    await lost;

    const pending = async () => {
      const info = await jsm.consumers.info(stream, 'jobhook-workers');
      return info.num_pending + info.num_ack_pending;
    };
    await until(async () => (await pending()) === 0, 'the event to be acked');
    // Two ack waits more: a redelivery to B would have run by now.
    await new Promise((resolve) => setTimeout(resolve, 2 * ackWaitMs));
    expect(runs).toEqual([`A:${payload.id}`]);
    expect((await jsm.consumers.info(stream, 'jobhook-workers')).delivered.consumer_seq).toBe(1);
    expect(workerErrors).toEqual([]);
  });
});
