// A JetStream worker whose slots are all busy holds no event it has not started: the next event
// waits in the stream for a free slot, here or on another worker. A worker that took it while
// busy would keep it past ack_wait without telling the server it works on it (nothing runs it
// yet), so the server would give it to another worker, and then both would run it.
import { afterEach, describe, expect, it } from 'vitest';
import { createReceiver } from 'jobhook';
import { natsHandoff } from 'jobhook/nats';
import { signDelivery } from 'jobhook/testing';
import { completedPayload, deferred, SECRET } from '../fixtures.js';
import { natsAvailable } from '../support/services.js';
import { until } from './contract.js';
import { ownNatsStream } from './nats-stream.js';

const available = await natsAvailable();
const cleanups: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup().catch(() => undefined);
});

describe.runIf(available)('the JetStream worker with every slot busy', () => {
  it('leaves the next event to a free worker, which runs it once; the busy one does not run it too', async () => {
    const { js, jsm, stream, subject } = await ownNatsStream(cleanups);
    const handoff = natsHandoff({ js, stream, subject });
    const receiver = createReceiver({ secret: SECRET, handoff });
    const deliver = async (payload: object) => {
      const delivery = signDelivery({ secret: SECRET, payload });
      expect((await receiver.receive({ headers: delivery.headers, body: delivery.body })).status).toBe(200);
    };

    // Worker A: every slot taken by a handler that runs for longer than ack_wait (telling the
    // server it works on it).
    const SLOTS = 4;
    const runs: string[] = [];
    const longMayEnd = deferred();
    const long = Array.from({ length: SLOTS }, () => completedPayload());
    const longIds = new Set(long.map((payload) => payload.id));
    const options = { ackWaitMs: 1000, onWorkerError: () => undefined };
    const a = await handoff.work(
      createReceiver({ secret: SECRET }).onJobCompleted(async (event) => {
        runs.push(`A ${event.id}`);
        if (longIds.has(event.id)) await longMayEnd.promise;
      }),
      { ...options, concurrency: SLOTS },
    );
    cleanups.push(() => a.close());
    for (const payload of long) await deliver(payload);
    await until(() => runs.length === SLOTS, 'A to start its long events');

    const next = completedPayload();
    await deliver(next);
    // Worker B, free: it runs `next` (at once, or once the copy A held outlived ack_wait).
    const info = () => jsm.consumers.info(stream, 'jobhook-workers');
    const b = await handoff.work(
      createReceiver({ secret: SECRET }).onJobCompleted((event) => void runs.push(`B ${event.id}`)),
      options,
    );
    cleanups.push(() => b.close());
    await until(() => runs.includes(`B ${next.id}`), 'B to run the next event');

    longMayEnd.resolve();
    await until(async () => {
      const { num_pending, num_ack_pending } = await info();
      return num_pending + num_ack_pending === 0;
    }, 'both events to be acked');
    await a.close();
    await b.close();
    expect(runs.sort()).toEqual([...long.map((payload) => `A ${payload.id}`), `B ${next.id}`].sort());
    // Each event delivered once: no copy of `next` outlived its ack_wait in A.
    expect((await info()).delivered.consumer_seq).toBe(SLOTS + 1);
  });
});
