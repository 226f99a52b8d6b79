// A JetStream worker takes its stream from the hand-off: with a stream, subject and consumer of
// one's own, `handoff.work(receiver)` runs what the receiver handed off. The deprecated
// runNatsWorker, given neither that stream nor the hand-off, used to create the default stream
// `JOBHOOK` and listen there, running nothing (or another app's events): it now never creates a
// stream and refuses one that is missing, and, given the hand-off, refuses another stream,
// subject or consumer, naming both.
import { jetstream, jetstreamManager, type JetStreamClient } from '@nats-io/jetstream';
import { connect } from '@nats-io/transport-node';
import { afterEach, describe, expect, it } from 'vitest';
import { natsHandoff, runNatsWorker, type WorkerHandle } from 'jobhook/nats';
import { NATS_URL, natsAvailable, runTag, startPrivateNats } from '../support/services.js';
import { createReceiver } from 'jobhook';
import { SECRET } from '../fixtures.js';
import { until } from './contract.js';
import { invalidOptions, recordingReceiver } from './recording-receiver.js';

const available = await natsAvailable();
const cleanups: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup().catch(() => undefined);
});

async function client(url = NATS_URL) {
  const nc = await connect({ servers: url });
  cleanups.push(() => nc.close());
  return { js: jetstream(nc), jsm: await jetstreamManager(nc) };
}

/** A stream, subject and consumer of this test's own, its hand-off, and a receiver that records runs. */
async function ownStream() {
  const { js, jsm } = await client();
  const tag = runTag();
  const place = { stream: `IMAGES_${tag}`, subject: `images.${tag}.events`, consumer: `workers_${tag}` };
  cleanups.push(() => jsm.streams.delete(place.stream));
  cleanups.push(() => jsm.streams.delete(`${place.stream}_DONE`));
  const handoff = natsHandoff({ js, ...place });
  const { receiver, ran, deliver } = recordingReceiver(handoff);
  return { js, jsm, place, handoff, receiver, ran, deliver };
}

const running = async (worker: Promise<WorkerHandle>) => {
  const handle = await worker;
  cleanups.push(() => handle.close());
  return handle;
};

const streams = async (js: JetStreamClient) => {
  const names: string[] = [];
  for await (const name of (await js.jetstreamManager()).streams.names()) names.push(name);
  return names;
};

describe.runIf(available)('natsHandoff(...).work on a stream of its own', () => {
  it('runs the events the receiver handed off, from the hand-off’s consumer', async () => {
    const { jsm, place, receiver, ran, deliver } = await ownStream();
    const id = await deliver();
    // receiver.work(): the one way to start a worker, on the receiver's own hand-off.
    await running(receiver.work({ ackWaitMs: 1000 }));
    await until(() => ran.length === 1, 'the worker to run the event', 10_000);
    expect(ran).toEqual([id]);
    expect((await jsm.consumers.info(place.stream, place.consumer)).config.filter_subject).toBe(
      place.subject,
    );
  });

  it('creates the stream when the worker starts first, as publishing would', async () => {
    const { jsm, place, handoff, receiver, ran, deliver } = await ownStream();
    await running(handoff.work(receiver));
    expect((await jsm.streams.info(place.stream)).config.subjects).toEqual([
      place.subject,
      `${place.subject}.failed`,
    ]);
    const id = await deliver();
    await until(() => ran.length === 1, 'the worker to run the event', 10_000);
    expect(ran).toEqual([id]);
  });
});

describe.runIf(available)('runNatsWorker (deprecated) beside a stream of its own', () => {
  it('without the stream or the hand-off, refuses the missing default stream and does not create it', async () => {
    const server = await startPrivateNats(); // a server with no JOBHOOK stream, whatever the shared one holds
    cleanups.push(() => server.stop());
    const { js } = await client(server.url);
    const receiver = createReceiver({ secret: SECRET });
    await expect(running(runNatsWorker(receiver, { js, onWorkerError: () => undefined }))).rejects.toThrow(
      invalidOptions(/runNatsWorker: there is no JetStream stream "JOBHOOK"/),
    );
    expect(await streams(js)).toEqual([]);
  });

  it('given the hand-off, refuses another stream, naming both, and otherwise runs on its stream', async () => {
    const { place, handoff, receiver, ran, deliver } = await ownStream();
    await expect(running(runNatsWorker(receiver, { stream: 'JOBHOOK', handoff }))).rejects.toThrow(
      invalidOptions(
        new RegExp(`runNatsWorker: \`stream\` is "JOBHOOK", but the hand-off's stream is "${place.stream}"`),
      ),
    );
    await expect(running(runNatsWorker(receiver, { consumer: 'jobhook-workers', handoff }))).rejects.toThrow(
      invalidOptions(
        new RegExp(`\`consumer\` is "jobhook-workers", but the hand-off's consumer is "${place.consumer}"`),
      ),
    );
    const id = await deliver();
    await running(runNatsWorker(receiver, { handoff, ackWaitMs: 1000 }));
    await until(() => ran.length === 1, 'the worker to run the event', 10_000);
    expect(ran).toEqual([id]);
  });
});
