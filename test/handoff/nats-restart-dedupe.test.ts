// An event that ran is deleted from the work-queue stream once acked, and nats-server rebuilds
// its duplicate window at start from the messages it still holds, so after a restart the same
// event delivered again is stored as a new message. The worker finds its key among the events
// that ran (`<stream>_DONE`) and acks it without running its handlers again.
import { jetstream, jetstreamManager } from '@nats-io/jetstream';
import { connect } from '@nats-io/transport-node';
import { afterEach, describe, expect, it } from 'vitest';
import { createReceiver } from 'jobhook';
import { natsHandoff } from 'jobhook/nats';
import { signDelivery } from 'jobhook/testing';
import { completedPayload, SECRET } from '../fixtures.js';
import { natsAvailable, runTag, startPrivateNats } from '../support/services.js';
import { until } from './contract.js';

const available = await natsAvailable();
const cleanups: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup().catch(() => undefined);
});

describe.runIf(available)('the JetStream duplicate window across a restart of nats-server', () => {
  it('runs an event delivered again after the restart once', async () => {
    const server = await startPrivateNats();
    cleanups.push(() => server.stop());
    const nc = await connect({ servers: server.url, maxReconnectAttempts: -1, reconnectTimeWait: 50 });
    cleanups.push(() => nc.close());
    const js = jetstream(nc);
    const jsm = await jetstreamManager(nc);
    const tag = runTag();
    const place = { stream: `JOBHOOK_${tag}`, subject: `jobhook.${tag}.events` };
    const handoff = natsHandoff({ js, ...place });
    const receiver = createReceiver({ secret: SECRET, handoff });
    const runs: string[] = [];
    const worker = await handoff.work(
      createReceiver({ secret: SECRET }).onJobCompleted((event) => void runs.push(event.id)),
      { onWorkerError: () => undefined },
    );
    cleanups.push(() => worker.close());
    const payload = completedPayload();
    // As the sender does: again until answered 200 (503 while the client reconnects).
    const deliver = async () => {
      const delivery = signDelivery({ secret: SECRET, payload });
      await until(
        async () =>
          (await receiver.receive({ headers: delivery.headers, body: delivery.body })).status === 200,
        'a 200',
      );
    };
    const settled = async () => {
      const info = await jsm.consumers.info(place.stream, 'jobhook-workers');
      return info.num_pending + info.num_ack_pending === 0;
    };

    await deliver();
    await until(async () => runs.length === 1 && (await settled()), 'the event to run');
    await server.shutdown();
    await server.start();
    await deliver(); // the sender's retry, or the second webhook's copy, after the restart
    await until(settled, 'the queue to settle');
    await until(() => runs.length > 1, 'a second run', 3000).catch(() => undefined);
    expect(runs).toEqual([payload.id]);
  });
});
