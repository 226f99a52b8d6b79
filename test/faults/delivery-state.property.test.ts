// The delivery state machine under generated faults (issue 11): handlers throw arbitrary values,
// reject, finish long after their timeout (with success or failure); the dedupe store throws,
// rejects or hangs at random steps (up to two per run: a blip, not an outage longer than a lease);
// each event arrives through one or two webhooks (a secret rotation), and the sender retries every
// delivery until it gets a 2xx. On fake timers (the store's lease clock among them), over
// thousands of runs:
// - every delivery is answered within a bounded time;
// - no key is busy once its handlers settled and a lease passed;
// - each event's handlers succeed together exactly once.
import fc from 'fast-check';
import { createReceiver, memoryDedupeStore } from 'jobhook';
import type { DedupeStore } from 'jobhook/extend';
import { signDelivery } from 'jobhook/testing';
import { expect, test, vi } from 'vitest';
import { completedPayload, SECRET } from '../fixtures.js';
import { scaled, timeoutFor, withoutProcessErrors } from '../support/traffic.js';

const RUNS = process.env.JOBHOOK_STATE_RUNS ? Number(process.env.JOBHOOK_STATE_RUNS) : scaled(2_000);
const SEED = process.env.JOBHOOK_SEED ? { seed: Number(process.env.JOBHOOK_SEED) } : {};

const LEASE_MS = 400;
const HANDLER_TIMEOUT_MS = 100;
/** The longest a delivery may wait for its answer: a handler timeout plus hung store calls. */
const ANSWER_BOUND_MS = HANDLER_TIMEOUT_MS + 3 * (LEASE_MS / 3) + 50;
const LATE_MS = 600;
const STEP_MS = 10;
/** The sender gives up after this much (fake) time. */
const GIVE_UP_MS = 60_000;

type Behaviour =
  | { kind: 'ok' | 'ok-async' }
  | { kind: 'throw' | 'reject'; value: unknown }
  | { kind: 'late-ok' | 'late-fail'; afterMs: number };

const thrown = fc.oneof(
  fc.anything(),
  fc.constant(Object.create(null) as unknown),
  fc.constant({
    toString() {
      throw new Error('unprintable');
    },
  }),
  fc.string().map((message) => new Error(message)),
);

const behaviour: fc.Arbitrary<Behaviour> = fc.oneof(
  fc.constantFrom({ kind: 'ok' as const }, { kind: 'ok-async' as const }),
  fc.record({ kind: fc.constantFrom('throw' as const, 'reject' as const), value: thrown }),
  fc.record({
    kind: fc.constantFrom('late-ok' as const, 'late-fail' as const),
    afterMs: fc.integer({ min: HANDLER_TIMEOUT_MS + 1, max: LATE_MS }),
  }),
);

type Fault = 'throw' | 'reject' | 'hang';

const scenario = fc.record({
  /** Per event: through how many webhooks it is delivered. */
  events: fc.array(fc.integer({ min: 1, max: 2 }), { minLength: 1, maxLength: 3 }),
  /** Handler calls in order; once used up, handlers succeed. */
  behaviours: fc.array(behaviour, { maxLength: 12 }),
  /** Store calls (by their index) that fail, and how. */
  faults: fc.array(
    fc.tuple(fc.integer({ min: 0, max: 40 }), fc.constantFrom<Fault>('throw', 'reject', 'hang')),
    {
      maxLength: 2,
    },
  ),
  /** How long the sender waits between rounds of retries. */
  retryDelays: fc.array(fc.integer({ min: 0, max: LEASE_MS }), { minLength: 1, maxLength: 4 }),
});

/** Each run on fake timers of its own (the store's clock is `Date.now`); real ones around them. */
async function onFakeTimers(run: () => Promise<void>) {
  vi.useFakeTimers({
    toFake: [
      'setTimeout',
      'clearTimeout',
      'setInterval',
      'clearInterval',
      'setImmediate',
      'clearImmediate',
      'Date',
    ],
  });
  try {
    await run();
  } finally {
    vi.useRealTimers();
  }
}

type Scenario = typeof scenario extends fc.Arbitrary<infer T> ? T : never;

/** A memory store (on the fake clock) whose calls fail at the planned steps. */
function faultyStore(faults: readonly (readonly [number, Fault])[]) {
  const inner = memoryDedupeStore({ leaseMs: LEASE_MS, now: () => Date.now() });
  const plan = new Map(faults);
  let calls = 0;
  const step =
    <R>(call: (key: string, owner: string) => R) =>
    (key: string, owner: string): R | Promise<R> => {
      const fault = plan.get(calls++);
      if (fault === 'throw') throw new Error('store blip');
      if (fault === 'reject') return Promise.reject(new Error('store blip'));
      if (fault === 'hang') return new Promise<R>(() => undefined);
      return call(key, owner);
    };
  const store: DedupeStore = {
    leaseMs: LEASE_MS,
    claim: step((key, owner) => inner.claim(key, owner)),
    renew: step((key, owner) => inner.renew(key, owner)),
    complete: step((key, owner) => inner.complete(key, owner)),
    release: step((key, owner) => inner.release(key, owner)),
  };
  return { store, inner };
}

async function runScenario({ events, behaviours, faults, retryDelays }: Scenario) {
  const { store, inner } = faultyStore(faults);
  const receiver = createReceiver({
    secret: SECRET,
    dedupe: store,
    handlerTimeoutMs: HANDLER_TIMEOUT_MS,
    logger: { error: () => undefined, warn: () => undefined },
  });
  receiver.onError(() => undefined);

  // Each attempt (one parsed event object, shared by both handlers) succeeds when both do.
  const successes = new Map<string, number>();
  const attempts = new WeakMap<object, { pending: number; failed: boolean }>();
  let next = 0;
  const handler = (event: { id: string }) => {
    let attempt = attempts.get(event);
    if (!attempt) attempts.set(event, (attempt = { pending: 2, failed: false }));
    const settle = (ok: boolean) => {
      attempt.failed ||= !ok;
      if (--attempt.pending === 0 && !attempt.failed) {
        successes.set(event.id, (successes.get(event.id) ?? 0) + 1);
      }
    };
    const plan = behaviours[next++] ?? { kind: 'ok' };
    switch (plan.kind) {
      case 'ok':
        return settle(true);
      case 'ok-async':
        return Promise.resolve().then(() => settle(true));
      case 'throw':
        settle(false);
        throw plan.value;
      case 'reject':
        settle(false);
        // eslint-disable-next-line @typescript-eslint/prefer-promise-reject-errors -- arbitrary values on purpose
        return Promise.reject(plan.value);
      case 'late-ok':
      case 'late-fail':
        return new Promise<void>((resolve, reject) =>
          setTimeout(() => {
            settle(plan.kind === 'late-ok');
            if (plan.kind === 'late-ok') resolve();
            else reject(new Error('late failure'));
          }, plan.afterMs),
        );
    }
  };
  receiver.onJobCompleted(handler);
  receiver.onAny((event) => handler(event as { id: string }));

  const ids: string[] = [];
  const deliveries = events.flatMap((webhooks, e) => {
    const payload = completedPayload({ id: `evt_${e}` });
    ids.push(payload.id);
    return Array.from({ length: webhooks }, (_, w) =>
      signDelivery({
        secret: SECRET,
        payload,
        id: `msg_${e}_${w}`,
        timestamp: Math.floor(Date.now() / 1000),
      }),
    );
  });

  let pending = deliveries;
  const started = Date.now();
  for (let round = 0; pending.length > 0; round++) {
    // Holds last at most a few late handlers and leases: far less than this.
    if (Date.now() - started > GIVE_UP_MS) {
      throw new Error(`still not handled after ${round} rounds: ${pending.length} deliveries`);
    }
    const answers = pending.map((delivery) => {
      const answer = { status: 0 };
      void receiver.receive(delivery).then((response) => (answer.status = response.status));
      return answer;
    });
    // Every delivery is answered within the bound.
    for (let waited = 0; answers.some((answer) => answer.status === 0); waited += STEP_MS) {
      if (waited > ANSWER_BOUND_MS)
        throw new Error(`a delivery was not answered within ${ANSWER_BOUND_MS} ms`);
      await vi.advanceTimersByTimeAsync(STEP_MS);
    }
    for (const answer of answers) expect([200, 409, 500]).toContain(answer.status);
    pending = pending.filter((_, i) => answers[i]!.status !== 200);
    await vi.advanceTimersByTimeAsync(retryDelays[round % retryDelays.length]!);
  }

  // Late handlers settle, background completes finish, then a lease passes.
  await vi.advanceTimersByTimeAsync(LATE_MS + 2 * LEASE_MS);
  for (const id of ids) {
    expect(successes.get(id), `successes of ${id}`).toBe(1);
    const probe = inner.claim(id, 'probe');
    expect(probe, `state of ${id}`).not.toBe('busy');
    if (probe === 'new') inner.release(id, 'probe');
  }
  // Everything settled: close() resolves on the next turn of the (fake) event loop.
  let closed = false;
  void receiver.close({ timeoutMs: 0 }).then(() => (closed = true));
  await vi.advanceTimersByTimeAsync(1);
  expect(closed).toBe(true);
}

test(
  `the delivery state machine under faults: ${RUNS} runs`,
  async () => {
    const { errors } = await withoutProcessErrors(() =>
      fc.assert(
        fc.asyncProperty(scenario, (plan) => onFakeTimers(() => runScenario(plan))),
        { numRuns: RUNS, ...SEED },
      ),
    );
    expect(errors).toEqual([]);
  },
  timeoutFor(600_000),
);
