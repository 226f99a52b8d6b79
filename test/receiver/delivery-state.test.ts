// The delivery state machine through receive(): nothing lost, nothing twice, whatever handlers,
// onError, loggers and the dedupe store do (issue 11, items 1 to 6).
import { describe, expect, test, vi } from 'vitest';
import { createReceiver, memoryDedupeStore, type JobhookError, type ReceiverOptions } from 'jobhook';
import type { DedupeStore, ReceiverResponse } from 'jobhook/extend';
import { signDelivery } from 'jobhook/testing';
import { completedPayload, deferred, SECRET } from '../fixtures.js';

const quiet = () => ({ error: vi.fn(), warn: vi.fn() });
const make = (options: Partial<ReceiverOptions> = {}) =>
  createReceiver({ secret: SECRET, logger: quiet(), ...options });
const body = (response: ReceiverResponse) => JSON.parse(response.body) as Record<string, unknown>;

/** A memory store whose steps can be made to fail once. */
function flakyStore(fail: Partial<Record<'claim' | 'renew' | 'complete' | 'release', 'throw' | 'reject'>>) {
  const inner = memoryDedupeStore();
  const failures = { ...fail };
  const step =
    <A extends unknown[], R>(name: keyof typeof failures, call: (...args: A) => R) =>
    (...args: A): R | Promise<R> => {
      const how = failures[name];
      if (how) {
        delete failures[name];
        if (how === 'throw') throw new Error(`${name} blip`);
        return Promise.reject(new Error(`${name} blip`));
      }
      return call(...args);
    };
  const store: DedupeStore = {
    leaseMs: inner.leaseMs,
    claim: step('claim', (key: string, owner: string) => inner.claim(key, owner)),
    renew: step('renew', (key: string, owner: string) => inner.renew(key, owner)),
    complete: step('complete', (key: string, owner: string) => inner.complete(key, owner)),
    release: step('release', (key: string, owner: string) => inner.release(key, owner)),
  };
  return { store, inner };
}

describe('item 1: a wedged id never loses the event', () => {
  const unprintable = [
    ['Object.create(null)', () => Object.create(null) as unknown],
    [
      'an object whose toString throws',
      () => ({
        toString() {
          throw new Error('no');
        },
      }),
    ],
    [
      'an Error whose message getter throws',
      () =>
        Object.defineProperty(new Error(), 'message', {
          get() {
            throw new Error('no');
          },
        }),
    ],
  ] as const;

  test.each(unprintable)(
    'a handler that throws %s: 500 handler_failed, and the retry runs',
    async (_, value) => {
      for (const async of [false, true]) {
        const receiver = make();
        let runs = 0;
        receiver.onJobCompleted(() => {
          if (++runs > 1) return;
          // eslint-disable-next-line @typescript-eslint/prefer-promise-reject-errors -- the point of the test
          if (async) return Promise.reject(value());
          throw value();
        });
        const delivery = signDelivery({ secret: SECRET, payload: completedPayload() });
        const first = await receiver.receive(delivery);
        expect(first.status).toBe(500);
        expect(body(first)).toMatchObject({ error: { code: 'handler_failed' } });
        expect(body(await receiver.receive(delivery))).toEqual({ ok: true });
        expect(body(await receiver.receive(delivery))).toEqual({ ok: true, duplicate: true });
        expect(runs).toBe(2);
      }
    },
  );

  test.each(['throw', 'reject'] as const)(
    'a release that fails to %s once: the id is freed by its lease',
    async (how) => {
      let now = 0;
      const inner = memoryDedupeStore({ leaseMs: 1000, now: () => now });
      let failed = false;
      const store: DedupeStore = {
        leaseMs: 1000,
        claim: (key, owner) => inner.claim(key, owner),
        renew: (key, owner) => inner.renew(key, owner),
        complete: (key, owner) => inner.complete(key, owner),
        release: (key, owner) => {
          if (!failed) {
            failed = true;
            if (how === 'throw') throw new Error('release blip');
            return Promise.reject(new Error('release blip'));
          }
          return inner.release(key, owner);
        },
      };
      const errors: string[] = [];
      const receiver = make({ dedupe: store });
      receiver.onError((error) => void errors.push(error.code));
      let runs = 0;
      receiver.onJobCompleted(() => {
        if (++runs === 1) throw new Error('first attempt fails');
      });
      const delivery = signDelivery({ secret: SECRET, payload: completedPayload() });
      expect((await receiver.receive(delivery)).status).toBe(500);
      expect(errors).toEqual(['handler_failed', 'dedupe_store_failed']);
      expect((await receiver.receive(delivery)).status).toBe(409); // still held until the lease lapses
      now = 1000;
      expect(body(await receiver.receive(delivery))).toEqual({ ok: true });
      expect(runs).toBe(2);
    },
  );

  test.each(['throw', 'reject'] as const)(
    'a complete that fails to %s once: 200 (it ran), and it is retried to done',
    async (how) => {
      const { store } = flakyStore({ complete: how });
      const receiver = make({ dedupe: { ...store, leaseMs: 40 } });
      const errors: string[] = [];
      receiver.onError((error) => void errors.push(error.code));
      let runs = 0;
      receiver.onJobCompleted(() => void runs++);
      const delivery = signDelivery({ secret: SECRET, payload: completedPayload() });
      expect(body(await receiver.receive(delivery))).toEqual({ ok: true });
      expect(errors).toEqual(['dedupe_store_failed']);
      await vi.waitFor(async () =>
        expect(body(await receiver.receive(delivery))).toEqual({ ok: true, duplicate: true }),
      );
      expect(runs).toBe(1);
    },
  );

  test.each(['throw', 'reject'] as const)(
    'a claim that fails to %s: 500 (retryable), and the retry runs',
    async (how) => {
      const { store } = flakyStore({ claim: how });
      const receiver = make({ dedupe: store });
      let runs = 0;
      receiver.onJobCompleted(() => void runs++);
      const delivery = signDelivery({ secret: SECRET, payload: completedPayload() });
      expect((await receiver.receive(delivery)).status).toBe(500);
      expect(body(await receiver.receive(delivery))).toEqual({ ok: true });
      expect(runs).toBe(1);
    },
  );

  test('a claim that never settles is answered 500 within a third of the lease', async () => {
    const store: DedupeStore = {
      leaseMs: 60,
      claim: () => new Promise(() => undefined),
      renew: () => true,
      complete: () => undefined,
      release: () => undefined,
    };
    const receiver = make({ dedupe: store });
    receiver.onJobCompleted(() => undefined);
    const response = await receiver.receive(signDelivery({ secret: SECRET, payload: completedPayload() }));
    expect(response.status).toBe(500);
  });
});

describe('item 2: one event through two webhooks runs once', () => {
  const sameEventTwice = () => {
    const payload = completedPayload();
    return [
      signDelivery({ secret: SECRET, payload, id: 'msg_from_old_webhook' }),
      signDelivery({ secret: SECRET, payload, id: 'msg_from_new_webhook' }),
    ];
  };

  test('by default the payload id is the key: the second delivery is a duplicate', async () => {
    const receiver = make();
    const handler = vi.fn();
    receiver.onJobCompleted(handler);
    const [a, b] = sameEventTwice();
    expect(body(await receiver.receive(a!))).toEqual({ ok: true });
    expect(body(await receiver.receive(b!))).toEqual({ ok: true, duplicate: true });
    expect(handler).toHaveBeenCalledTimes(1);
  });

  test("dedupeKey: 'delivery' keys by webhook-id: both run", async () => {
    const receiver = make({ dedupeKey: 'delivery' });
    const handler = vi.fn();
    receiver.onJobCompleted(handler);
    for (const delivery of sameEventTwice())
      expect(body(await receiver.receive(delivery))).toEqual({ ok: true });
    expect(handler).toHaveBeenCalledTimes(2);
  });

  test('dedupeKey as a function of the verified delivery', async () => {
    const seen: unknown[] = [];
    const receiver = make({
      dedupeKey: (delivery) => {
        seen.push({ id: delivery.deliveryId, type: delivery.type });
        return (delivery.event as { data: { task_id: string } }).data.task_id;
      },
    });
    const handler = vi.fn();
    receiver.onJobCompleted(handler);
    const [a] = sameEventTwice();
    const other = completedPayload({ data: { ...completedPayload().data, task_id: 'same' } });
    const first = signDelivery({ secret: SECRET, payload: { ...other, id: 'evt_1' } });
    const second = signDelivery({ secret: SECRET, payload: { ...other, id: 'evt_2' } });
    await receiver.receive(a!);
    await receiver.receive(first);
    expect(body(await receiver.receive(second))).toEqual({ ok: true, duplicate: true });
    expect(handler).toHaveBeenCalledTimes(2);
    expect(seen[0]).toEqual({ id: a!.headers['webhook-id'], type: 'job.completed' });
  });

  test('a dedupeKey that is not one of the choices is refused at creation', () => {
    expect(() => make({ dedupeKey: 'payload' as never })).toThrow(/dedupeKey/);
  });
});

describe('item 3: an onError that never settles delays nothing', () => {
  test('the failed delivery is answered at once, and close() resolves within its bound', async () => {
    const receiver = make();
    receiver.onJobCompleted(() => {
      throw new Error('boom');
    });
    const seen: JobhookError[] = [];
    receiver.onError((error) => {
      seen.push(error);
      return new Promise(() => undefined);
    });
    const response = await receiver.receive(signDelivery({ secret: SECRET, payload: completedPayload() }));
    expect(response.status).toBe(500);
    expect(seen).toHaveLength(1);
    await receiver.close({ timeoutMs: 50 });
  });

  test('close() waits for an onError that does settle', async () => {
    const receiver = make();
    receiver.onJobCompleted(() => {
      throw new Error('boom');
    });
    const gate = deferred();
    let reported = false;
    receiver.onError(async () => {
      await gate.promise;
      reported = true;
    });
    await receiver.receive(signDelivery({ secret: SECRET, payload: completedPayload() }));
    const closed = receiver.close();
    setTimeout(gate.resolve, 20);
    await closed;
    expect(reported).toBe(true);
  });
});

describe('item 4: a handler that outlives handlerTimeoutMs', () => {
  test('close() waits for it, then the claim is done', async () => {
    const store = memoryDedupeStore();
    const receiver = make({ handlerTimeoutMs: 10, dedupe: store });
    const gate = deferred();
    let finished = false;
    receiver.onJobCompleted(async () => {
      await gate.promise;
      finished = true;
    });
    const payload = completedPayload();
    expect((await receiver.receive(signDelivery({ secret: SECRET, payload }))).status).toBe(500);
    const closed = receiver.close();
    setTimeout(gate.resolve, 30);
    await closed;
    expect(finished).toBe(true);
    expect(store.claim(payload.id, 'probe')).toBe('done');
  });

  test('close({ timeoutMs }) stops waiting for one that never settles, and says so', async () => {
    const logger = quiet();
    const receiver = make({ handlerTimeoutMs: 10, logger });
    receiver.onJobCompleted(() => new Promise(() => undefined));
    await receiver.receive(signDelivery({ secret: SECRET, payload: completedPayload() }));
    await receiver.close({ timeoutMs: 30 });
    expect(logger.error).toHaveBeenCalledWith(expect.stringContaining('close() stopped waiting after 30 ms'));
  });

  test('its claim is renewed while it runs, past the lease', async () => {
    // The store's clock moves half a lease at each renewal, so the claim outlives three leases only
    // by being renewed: a sleep of three leases would test how busy the machine is, since a renewal
    // whose timer fires after the lease (a loop kept from running) loses the claim, as it should.
    const LEASE_MS = 40;
    let clock = 0;
    const store = memoryDedupeStore({ leaseMs: LEASE_MS, now: () => clock });
    const threeLeases = deferred();
    const renew = store.renew.bind(store);
    store.renew = (key, owner) => {
      const kept = renew(key, owner);
      if (kept && (clock += LEASE_MS / 2) >= 3 * LEASE_MS) threeLeases.resolve();
      return kept;
    };
    const receiver = make({ handlerTimeoutMs: 10, dedupe: store });
    const gate = deferred();
    let runs = 0;
    receiver.onJobCompleted(() => {
      runs++;
      return gate.promise;
    });
    const delivery = signDelivery({ secret: SECRET, payload: completedPayload() });
    expect((await receiver.receive(delivery)).status).toBe(500);
    await threeLeases.promise;
    expect((await receiver.receive(delivery)).status).toBe(409);
    gate.resolve();
    await vi.waitFor(async () =>
      expect(body(await receiver.receive(delivery))).toEqual({ ok: true, duplicate: true }),
    );
    expect(runs).toBe(1);
  });
});

describe('item 5: a claim whose holder died expires', () => {
  test('a retry after the lease runs the handlers', async () => {
    let now = 0;
    const store = memoryDedupeStore({ leaseMs: 1000, now: () => now });
    const payload = completedPayload();
    store.claim(payload.id, 'a process that was killed');
    const receiver = make({ dedupe: store });
    const handler = vi.fn();
    receiver.onJobCompleted(handler);
    const delivery = signDelivery({ secret: SECRET, payload });
    expect((await receiver.receive(delivery)).status).toBe(409);
    now = 1000;
    expect(body(await receiver.receive(delivery))).toEqual({ ok: true });
    expect(handler).toHaveBeenCalledTimes(1);
  });
});

describe('item 6: a logger that fails changes no answer', () => {
  const throwing = {
    error() {
      throw new Error('log sink down');
    },
    warn() {
      throw new Error('log sink down');
    },
  };
  const rejecting = {
    error: () => Promise.reject(new Error('log sink down')),
    warn: () => Promise.reject(new Error('log sink down')),
  };

  test.each([
    ['throws', throwing],
    ['rejects', rejecting],
  ])('a logger that %s: every answer is the same as with a working one', async (_, logger) => {
    const receiver = createReceiver({ secret: SECRET, logger, handlerTimeoutMs: 10 });
    receiver.onJobCompleted(() => {
      throw new Error('handler failure, logged');
    });
    const unsigned = { headers: {}, body: JSON.stringify(completedPayload()) };
    expect((await receiver.receive(unsigned)).status).toBe(401);
    const notJson = signDelivery({ secret: SECRET, payload: '{' });
    expect((await receiver.receive(notJson)).status).toBe(400);
    const delivery = signDelivery({ secret: SECRET, payload: completedPayload() });
    expect((await receiver.receive(delivery)).status).toBe(500);
    expect(
      (await receiver.receive({ headers: delivery.headers, body: { parsed: true } as never })).status,
    ).toBe(500);
  });
});
