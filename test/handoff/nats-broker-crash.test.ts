// nats-server SIGKILLed while events are being published and run, then started again from its
// store: every event the receiver answered 200 for runs, and none is kept as failed. Some may run
// twice: the server forgets the acks it confirmed in its last moments (docs/handoff.md, "What a
// crash of nats-server repeats"), so this test counts repeats and does not forbid them.
import { setTimeout as sleep } from 'node:timers/promises';
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
const EVENTS = 300;
const cleanups: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup().catch(() => undefined);
});

describe.runIf(available)('the JetStream hand-off across a SIGKILL of nats-server', () => {
  it('runs every event answered 200 and keeps none as failed', async () => {
    const server = await startPrivateNats();
    cleanups.push(() => server.stop());
    const options = { servers: server.url, maxReconnectAttempts: -1, reconnectTimeWait: 50 };
    const tag = runTag();
    const place = { stream: `JOBHOOK_${tag}`, subject: `jobhook.${tag}.events` };

    const receiverConnection = await connect(options);
    cleanups.push(() => receiverConnection.close());
    const handoff = natsHandoff({ js: jetstream(receiverConnection), ...place, timeoutMs: 1000 });
    const receiver = createReceiver({ secret: SECRET, handoff, logger: { error: () => undefined } });

    const runs = new Map<string, number>();
    const workerConnection = await connect(options);
    cleanups.push(() => workerConnection.close());
    const worker = await natsHandoff({ js: jetstream(workerConnection), ...place }).work(
      createReceiver({ secret: SECRET }).onJobCompleted(async (event) => {
        runs.set(event.id, (runs.get(event.id) ?? 0) + 1);
        await sleep(Math.random() * 5);
      }),
      {
        ackWaitMs: 2000,
        attempts: 3,
        backoffMs: [50],
        onWorkerError: () => undefined,
      },
    );
    cleanups.push(() => worker.close());

    // The sender: each event delivered until it is answered 200, eight at a time.
    const payloads = Array.from({ length: EVENTS }, () => completedPayload());
    const answered = new Set<string>();
    let next = 0;
    const send = async () => {
      for (let payload = payloads[next++]; payload; payload = payloads[next++]) {
        const delivery = signDelivery({ secret: SECRET, payload });
        while ((await receiver.receive({ headers: delivery.headers, body: delivery.body })).status !== 200)
          await sleep(50);
        answered.add(payload.id);
      }
    };
    const sending = Promise.all(Array.from({ length: 8 }, send));

    await until(() => answered.size >= EVENTS / 2, 'half the events to be answered');
    await server.kill();
    await sleep(300);
    await server.start();
    await sending;

    const jsm = await jetstreamManager(receiverConnection);
    await until(
      async () => {
        const info = await jsm.consumers.info(place.stream, 'jobhook-workers');
        return info.num_pending + info.num_ack_pending === 0 && runs.size === EVENTS;
      },
      'every event to run',
      60_000,
    );
    const repeated = [...runs.values()].filter((count) => count > 1).length;
    console.log(`${EVENTS} events across a SIGKILL of nats-server: ${repeated} ran twice`);
    expect(payloads.filter((payload) => !runs.has(payload.id))).toEqual([]);
    expect(await handoff.listFailed()).toEqual([]);
  }, 90_000);
});
