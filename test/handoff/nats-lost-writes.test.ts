// A JetStream worker finishes an event with two writes: its done key, then its ack. Either may be
// lost on the way (the link to the server goes down with it in flight, as when nats-server
// restarts). The worker sends it again once reconnected, and until the ack is confirmed keeps
// telling the server it is still on the event: the event's handlers run once, and the server does
// not give it to a worker again after ack_wait. Each test fails without its part: without the
// ack's resend the server, which never saw the ack, delivers the event again; without the done
// key's prompt resend and the progress signals, another worker takes the event, finds no done key
// yet and runs it a second time (seen in the many-instances test across a nats-server restart).
import { jetstream, jetstreamManager, type JetStreamManager } from '@nats-io/jetstream';
import { connect, type NatsConnection } from '@nats-io/transport-node';
import { afterEach, describe, expect, it } from 'vitest';
import { createReceiver, type Receiver } from 'jobhook';
import { natsHandoff, type WorkOptions } from 'jobhook/nats';
import { signDelivery } from 'jobhook/testing';
import { completedPayload, deferred, SECRET } from '../fixtures.js';
import { startLossyLink, type LossyLink } from '../support/lossy-link.js';
import { NATS_URL, natsAvailable, runTag } from '../support/services.js';
import { until } from './contract.js';

const available = await natsAvailable();
const cleanups: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup().catch(() => undefined);
});

interface Setup {
  nc: NatsConnection;
  jsm: JetStreamManager;
  receiver: Receiver;
  link: LossyLink;
  /** A connection to the server through `link`. */
  linked: NatsConnection;
  place: { stream: string; subject: string };
  workerOptions: WorkOptions;
  workerErrors: string[];
  /** Events still to ack, or being given out again. */
  pending(): Promise<number>;
}

async function setUp(ackWaitMs: number): Promise<Setup> {
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
  const linked = await connect({
    servers: `127.0.0.1:${link.port}`,
    maxReconnectAttempts: -1,
    reconnectTimeWait: 50,
  });
  cleanups.push(() => linked.close());
  const workerErrors: string[] = [];
  return {
    nc,
    jsm,
    receiver,
    link,
    linked,
    place: { stream, subject },
    workerOptions: {
      ackWaitMs,
      onWorkerError: (error) => void workerErrors.push(error.message),
    },
    workerErrors,
    async pending() {
      const info = await jsm.consumers.info(stream, 'jobhook-workers');
      return info.num_pending + info.num_ack_pending;
    },
  };
}

/** A handler that records its runs under `name` and holds each until `finish` resolves. */
function heldHandler(name: string, runs: string[]) {
  const started = deferred();
  const finish = deferred();
  const receiver = createReceiver({ secret: SECRET }).onJobCompleted(async (event) => {
    runs.push(`${name}:${event.id}`);
    started.resolve();
    await finish.promise;
  });
  return { receiver, started, finish };
}

async function deliver(receiver: Receiver) {
  const payload = completedPayload();
  const delivery = signDelivery({ secret: SECRET, payload });
  expect((await receiver.receive({ headers: delivery.headers, body: delivery.body })).status).toBe(200);
  return payload.id;
}

describe.runIf(available)('the JetStream worker when a write that finishes an event is lost', () => {
  it('acks again after the reconnect when the ack is lost: the event runs once and is not redelivered', async () => {
    const setup = await setUp(2000);
    const runs: string[] = [];
    const held = heldHandler('A', runs);
    const worker = await natsHandoff({ js: jetstream(setup.linked), ...setup.place }).work(
      held.receiver,
      setup.workerOptions,
    );
    cleanups.push(() => worker.close());

    const id = await deliver(setup.receiver);
    await held.started.promise;
    // The handler succeeds; its ack is dropped on the way and the connection cut behind it.
    const lost = setup.link.loseNext('+ACK');
    held.finish.resolve();
    await lost;

    // Without the resend this waits for ack_wait to run out, the redelivery and its run.
    await until(async () => (await setup.pending()) === 0, 'the event to be acked');
    expect(runs).toEqual([`A:${id}`]);
    // Delivered once: the ack landed; the server did not give the event out again.
    expect(
      (await setup.jsm.consumers.info(setup.place.stream, 'jobhook-workers')).delivered.consumer_seq,
    ).toBe(1);
    expect(setup.workerErrors).toEqual([]);
    expect((await setup.jsm.streams.info(setup.place.stream)).state.messages).toBe(0);
  });

  it('writes a lost done key again and keeps the event meanwhile: no other worker runs it', async () => {
    const ackWaitMs = 1000;
    const setup = await setUp(ackWaitMs);
    const runs: string[] = [];
    // Worker A, over the link, with one slot: busy with the event until it is acked, so only
    // worker B could take a redelivery.
    const held = heldHandler('A', runs);
    const workerA = await natsHandoff({ js: jetstream(setup.linked), ...setup.place }).work(held.receiver, {
      ...setup.workerOptions,
      concurrency: 1,
    });
    cleanups.push(() => workerA.close());
    const id = await deliver(setup.receiver);
    await held.started.promise;
    const workerB = await natsHandoff({ js: jetstream(setup.nc), ...setup.place }).work(
      createReceiver({ secret: SECRET }).onJobCompleted((event) => void runs.push(`B:${event.id}`)),
      setup.workerOptions,
    );
    cleanups.push(() => workerB.close());

    // The handler succeeds; the write of its done key is dropped and the connection cut behind it.
    const lost = setup.link.loseNext('.done.');
    held.finish.resolve();
    await lost;

    await until(async () => (await setup.pending()) === 0, 'the event to be acked');
    // Two ack waits more: a redelivery to B would have run by now.
    await new Promise((resolve) => setTimeout(resolve, 2 * ackWaitMs));
    expect(runs).toEqual([`A:${id}`]);
    expect(
      (await setup.jsm.consumers.info(setup.place.stream, 'jobhook-workers')).delivered.consumer_seq,
    ).toBe(1);
    expect(setup.workerErrors).toEqual([]);
  });
});
