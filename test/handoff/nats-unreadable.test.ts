// A JetStream message the worker cannot read as a job (JSON `null`, a number, a string, an array,
// bytes that are not JSON) is kept as failed, acked, and listed like any other failed event: none
// may stay in the stream unacked for ever, redelivered and invisible to `jobhook failed`.
import { afterEach, describe, expect, it } from 'vitest';
import { createReceiver } from 'jobhook';
import { natsHandoff } from 'jobhook/nats';
import { signDelivery } from 'jobhook/testing';
import { completedPayload, SECRET } from '../fixtures.js';
import { natsAvailable } from '../support/services.js';
import { until } from './contract.js';
import { ownNatsStream } from './nats-stream.js';

const available = await natsAvailable();
const cleanups: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup().catch(() => undefined);
});

describe.runIf(available)('the JetStream worker and messages that are not jobs', () => {
  it('keeps each as failed, acked, and listed by listFailed', async () => {
    const { js, jsm, stream, subject } = await ownNatsStream(cleanups);
    const handoff = natsHandoff({ js, stream, subject });

    // One real event first: the hand-off creates the stream, and the worker runs it.
    const payload = completedPayload();
    const delivery = signDelivery({ secret: SECRET, payload });
    const receiver = createReceiver({ secret: SECRET, handoff });
    expect((await receiver.receive({ headers: delivery.headers, body: delivery.body })).status).toBe(200);
    const unreadable = ['null', '1', '"x"', '[]', 'not json {'];
    for (const body of unreadable) await js.publish(subject, body, { expect: { streamName: stream } });

    const ran: string[] = [];
    const errors: Error[] = [];
    const worker = await handoff.work(
      createReceiver({ secret: SECRET })
        .onJobCompleted((event) => void ran.push(event.id))
        .onError(() => undefined),
      { ackWaitMs: 1000, backoffMs: [10], onWorkerError: (error) => errors.push(error) },
    );
    cleanups.push(() => worker.close());

    const settled = async () => {
      const info = await jsm.consumers.info(stream, 'jobhook-workers');
      return info.num_pending + info.num_ack_pending === 0;
    };
    await until(
      async () => (await handoff.listFailed()).length === unreadable.length && (await settled()),
      'every unreadable message to be kept as failed',
      10_000,
    );
    expect(ran).toEqual([payload.id]);
    const failed = await handoff.listFailed();
    expect(failed.map((event) => event.attempts)).toEqual(unreadable.map(() => 0));
    for (const event of failed) expect(event.error).toMatch(/not a job|not JSON/);
    expect(failed.map((event) => event.payload)).toEqual([null, 1, 'x', [], 'not json {']);
    expect(errors).toEqual([]);
    // Nothing left in the stream but the failed records: every message was acked.
    expect((await jsm.streams.info(stream)).state.messages).toBe(unreadable.length);
  });
});
