// The receiver's observer hook (createReceiver({ observer })): what it is told about each delivery,
// that `within` wraps the delivery's work, and that an observer that throws changes no answer.
import { AsyncLocalStorage } from 'node:async_hooks';
import { createReceiver, type ReceiverObserver } from 'jobhook';
import type { ObservedDelivery, ObservedHandoff } from 'jobhook/extend';
import { signDelivery } from 'jobhook/testing';
import { describe, expect, it } from 'vitest';
import { completedPayload, deferred, failedPayload, SECRET } from '../fixtures.js';

function recorder() {
  const seen: ObservedDelivery[] = [];
  const observer: ReceiverObserver<number> = {
    start: () => seen.length,
    end: (_state, delivery) => void seen.push(delivery),
  };
  return { seen, observer };
}

const signed = (payload: object, secret = SECRET) => {
  const delivery = signDelivery({ secret, payload });
  return { headers: delivery.headers, body: delivery.body as string, id: delivery.id };
};

describe('what an observer is told', () => {
  it('a handled delivery, a duplicate, a refusal, a rejection and a failing handler', async () => {
    const { seen, observer } = recorder();
    const receiver = createReceiver({ secret: SECRET, observer })
      .onJobCompleted(() => {})
      .onJobFailed(() => {
        throw new Error('no');
      });
    const ok = signed(completedPayload({ id: 'evt_obs_1' }));
    expect((await receiver.receive(ok)).status).toBe(200);
    expect((await receiver.receive(signed(completedPayload({ id: 'evt_obs_1' })))).status).toBe(200);
    expect((await receiver.receive(signed(completedPayload(), 'whsec_d3Jvbmctc2VjcmV0'))).status).toBe(401);
    const notJson = signDelivery({ secret: SECRET, payload: '{' });
    expect((await receiver.receive({ headers: notJson.headers, body: notJson.body })).status).toBe(400);
    expect((await receiver.receive({ method: 'GET', headers: {}, body: '' })).status).toBe(405);
    const failing = signed(failedPayload({ id: 'evt_obs_2' }));
    expect((await receiver.receive(failing)).status).toBe(500);

    expect(seen.map(({ durationMs: _total, handlerMs: _handlers, ...rest }) => rest)).toEqual([
      {
        outcome: 'ok',
        status: 200,
        code: undefined,
        refusal: undefined,
        deliveryId: ok.id,
        type: 'job.completed',
        dedupe: 'new',
      },
      {
        outcome: 'duplicate',
        status: 200,
        code: undefined,
        refusal: undefined,
        deliveryId: expect.any(String),
        type: 'job.completed',
        dedupe: 'duplicate',
      },
      {
        outcome: 'refused',
        status: 401,
        code: 'invalid_signature',
        refusal: 'no_match',
        deliveryId: undefined,
        type: undefined,
        dedupe: undefined,
      },
      {
        outcome: 'rejected',
        status: 400,
        code: 'invalid_json',
        refusal: undefined,
        deliveryId: undefined,
        type: undefined,
        dedupe: undefined,
      },
      {
        outcome: 'rejected',
        status: 405,
        code: 'method_not_allowed',
        refusal: undefined,
        deliveryId: undefined,
        type: undefined,
        dedupe: undefined,
      },
      {
        outcome: 'failed',
        status: 500,
        code: 'handler_failed',
        refusal: undefined,
        deliveryId: failing.id,
        type: 'job.failed',
        dedupe: 'new',
      },
    ]);
    // Handlers ran for the first and the last only.
    expect(seen.map((delivery) => typeof delivery.handlerMs)).toEqual([
      'number',
      'undefined',
      'undefined',
      'undefined',
      'undefined',
      'number',
    ]);
    for (const delivery of seen) expect(delivery.durationMs).toBeGreaterThanOrEqual(0);
  });

  it('a delivery in progress elsewhere (409), and handlers timed until they settle', async () => {
    const { seen, observer } = recorder();
    const gate = deferred();
    const started = deferred();
    const receiver = createReceiver({ secret: SECRET, observer }).onJobCompleted(() => {
      started.resolve();
      return gate.promise;
    });
    const payload = completedPayload({ id: 'evt_obs_busy' });
    const first = receiver.receive(signed(payload));
    // From the handler's start: the delivery's first steps (a first call compiles) are not timed here.
    await started.promise;
    await new Promise((resolve) => setTimeout(resolve, 30));
    expect((await receiver.receive(signed(payload))).status).toBe(409);
    gate.resolve();
    expect((await first).status).toBe(200);
    expect(seen.map((delivery) => [delivery.outcome, delivery.dedupe, delivery.code])).toEqual([
      ['in_progress', 'in_progress', 'in_progress'],
      ['ok', 'new', undefined],
    ]);
    expect(seen[1]!.handlerMs).toBeGreaterThanOrEqual(25);
  });

  it('no dedupe: the handlers ran, and the dedupe outcome is undefined', async () => {
    const { seen, observer } = recorder();
    const receiver = createReceiver({ secret: SECRET, observer, dedupe: false }).onJobCompleted(() => {});
    await receiver.receive(signed(completedPayload()));
    expect(seen[0]).toMatchObject({ outcome: 'ok', dedupe: undefined, handlerMs: expect.any(Number) });
  });
});

describe('within', () => {
  it('runs the delivery inside it, so handlers see what it set', async () => {
    const store = new AsyncLocalStorage<string>();
    const observer: ReceiverObserver<string> = {
      start: () => 'delivery-context',
      within: (state, work) => store.run(state, work),
      end: () => {},
    };
    const inside: (string | undefined)[] = [];
    const receiver = createReceiver({ secret: SECRET, observer }).onJobCompleted(async () => {
      await Promise.resolve();
      inside.push(store.getStore());
    });
    expect((await receiver.receive(signed(completedPayload()))).status).toBe(200);
    expect(inside).toEqual(['delivery-context']);
    expect(store.getStore()).toBeUndefined();
  });
});

describe('an observer that throws', () => {
  it.each(['start', 'within', 'within after work', 'end'])(
    'in %s: the same answers, each handler run once, one line logged',
    async (where) => {
      const errors: string[] = [];
      const boom = () => {
        throw new Error(`observer broke in ${where}`);
      };
      const observer: ReceiverObserver = {
        start: where === 'start' ? boom : () => undefined,
        within:
          where === 'within'
            ? boom
            : where === 'within after work'
              ? (_state, work) => {
                  void work();
                  return boom();
                }
              : undefined,
        end: where === 'end' ? boom : () => {},
      };
      let runs = 0;
      const receiver = createReceiver({
        secret: SECRET,
        observer,
        logger: { error: (m) => errors.push(m) },
      }).onJobCompleted(() => void runs++);
      expect((await receiver.receive(signed(completedPayload({ id: 'evt_boom' })))).status).toBe(200);
      const again = await receiver.receive(signed(completedPayload({ id: 'evt_boom' })));
      expect(again).toMatchObject({ status: 200, body: JSON.stringify({ ok: true, duplicate: true }) });
      expect(runs).toBe(1);
      expect(errors).toHaveLength(1);
      expect(errors[0]).toMatch(/observer failed in (start|within|end)\(\): observer broke/);
    },
  );
});

it('refuses an observer without start() and end() when the receiver is created', () => {
  for (const observer of [{}, { start: () => 1 }, null, 'otel']) {
    expect(() =>
      createReceiver({ secret: SECRET, observer: observer as unknown as ReceiverObserver }),
    ).toThrow(
      expect.objectContaining({ code: 'invalid_options', message: expect.stringMatching(/observer/) }),
    );
  }
});

describe('hand-offs reported by a queue worker (handleQueued with { attempt: 1 }, as runWorker calls it)', () => {
  const job = (latencyMs: number) => ({
    key: 'evt_1',
    type: 'job.completed',
    deliveryId: 'msg_1',
    payload: completedPayload(),
    receivedAt: Date.now() - latencyMs,
  });

  it("reach that receiver's observer on the first attempt only; a throwing handoff() is logged once", async () => {
    const seen: ObservedHandoff[] = [];
    const errors: string[] = [];
    const observer: ReceiverObserver = { start: () => 0, end: () => {}, handoff: (h) => void seen.push(h) };
    const observed = createReceiver({ secret: SECRET, observer });
    const other = createReceiver({ secret: SECRET });
    await observed.handleQueued(job(12), { attempt: 1 });
    await observed.handleQueued(job(12), { attempt: 2 });
    await observed.handleQueued(job(12));
    await other.handleQueued(job(12), { attempt: 1 });
    expect(seen).toEqual([
      { deliveryId: 'msg_1', type: 'job.completed', latencyMs: expect.any(Number) as number },
    ]);
    expect(seen[0]!.latencyMs).toBeGreaterThanOrEqual(12);

    const broken = createReceiver({
      secret: SECRET,
      logger: { error: (message) => errors.push(message) },
      observer: {
        start: () => 0,
        end: () => {},
        handoff: () => {
          throw new Error('no');
        },
      },
    });
    await broken.handleQueued(job(1), { attempt: 1 });
    await broken.handleQueued(job(1), { attempt: 1 });
    expect(errors).toEqual([expect.stringMatching(/observer failed in handoff\(\): no/)]);
  });
});
