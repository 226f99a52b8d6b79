// Generated hostile deliveries, through `receive` and over HTTP through the Node adapter: nothing
// unsigned or mis-signed is ever dispatched, every refusal is one of the design's 4xx, no 5xx,
// no unhandled rejection, no crash. Valid deliveries are mixed in, so the property is not vacuous.
// Counts: 12,000 through receive + 8,000 over HTTP per run (x JOBHOOK_STRESS).
import fc from 'fast-check';
import { createReceiver, type Receiver } from 'jobhook';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { SECRET } from '../adapters/fixtures.js';
import type { Running } from '../adapters/http.js';
import { PATH, targets } from '../adapters/targets.js';
import { createSender, scaled, timeoutFor, withoutProcessErrors, type Sender } from '../support/traffic.js';
import {
  anyText,
  build,
  DESIGN_4XX,
  expected,
  httpText,
  NOW,
  recipes,
  type Built,
  type Kind,
} from './deliveries.js';

const RECEIVE_RUNS = scaled(12_000);
const HTTP_BATCH = 8;
const HTTP_RUNS = scaled(1_000); // x HTTP_BATCH deliveries
/** JOBHOOK_SEED=<n> replays a run fast-check reported, with its counts. */
const SEED = process.env.JOBHOOK_SEED ? { seed: Number(process.env.JOBHOOK_SEED) } : {};

interface Tally {
  sent: number;
  byKind: Record<Kind, number>;
  byStatus: Record<number, number>;
}

function tally(): Tally {
  return {
    sent: 0,
    byKind: {
      valid: 0,
      mutated: 0,
      random: 0,
      'wrong-secret': 0,
      stale: 0,
      'bad-body': 0,
      'wrong-method': 0,
    },
    byStatus: {},
  };
}

/** A receiver at the suites' clock that counts dispatches per payload id. */
function countingReceiver() {
  const dispatched = new Map<string, number>();
  const receiver = createReceiver({
    secret: SECRET,
    now: () => NOW * 1000,
    logger: { error: () => undefined },
  });
  receiver.onAny((event) => {
    const id = (event as { id: string }).id;
    dispatched.set(id, (dispatched.get(id) ?? 0) + 1);
  });
  return { receiver, dispatched };
}

/** The one check every generated delivery gets, whichever way it travelled. */
function check(built: Built, status: number, body: string, dispatched: Map<string, number>, seen: Tally) {
  seen.sent++;
  seen.byKind[built.kind]++;
  seen.byStatus[status] = (seen.byStatus[status] ?? 0) + 1;
  if (built.kind === 'valid') {
    expect(status).toBe(200);
    expect(dispatched.get(built.eventId!)).toBe(1);
  } else {
    expect(DESIGN_4XX).toContain(status);
    expect(expected[built.kind]).toContain(status);
    // The answer is the receiver's small JSON, never a stack trace.
    expect(JSON.parse(body)).toMatchObject({ ok: false, error: { code: expect.any(String) } });
    expect(body).not.toContain('\n    at ');
  }
}

function totalDispatches(dispatched: Map<string, number>) {
  let total = 0;
  for (const count of dispatched.values()) total += count;
  return total;
}

describe('hostile deliveries, generated', () => {
  test(
    `through receive: ${RECEIVE_RUNS} deliveries`,
    async () => {
      const { receiver, dispatched } = countingReceiver();
      const seen = tally();
      const { errors } = await withoutProcessErrors(() =>
        fc.assert(
          fc.asyncProperty(recipes(anyText), async (recipe) => {
            const built = build(recipe);
            const answer = await receiver.receive(built.delivery);
            check(built, answer.status, answer.body, dispatched, seen);
          }),
          { numRuns: RECEIVE_RUNS, ...SEED },
        ),
      );
      expect(errors).toEqual([]);
      expect(seen.sent).toBe(RECEIVE_RUNS);
      // Only the valid deliveries were dispatched, each once.
      expect(totalDispatches(dispatched)).toBe(seen.byKind.valid);
      expect(seen.byKind.valid).toBeGreaterThan(0);
      expect(({} as Record<string, unknown>).polluted).toBeUndefined();
      console.info(`[hostile] receive: ${JSON.stringify(seen)}`);
    },
    timeoutFor(60_000),
  );

  describe('over HTTP through the node adapter', () => {
    const target = targets.find((t) => t.name === 'node http.createServer')!;
    let server: Running;
    let sender: Sender;
    let counting: { receiver: Receiver; dispatched: Map<string, number> };

    beforeAll(async () => {
      counting = countingReceiver();
      server = await target.start(counting.receiver);
      sender = createSender(server.origin);
    });
    afterAll(async () => {
      sender.close();
      await server.close();
    });

    test(
      `${HTTP_RUNS * HTTP_BATCH} deliveries, ${HTTP_BATCH} at a time on kept-alive connections`,
      async () => {
        const { dispatched } = counting;
        const seen = tally();
        const { errors } = await withoutProcessErrors(() =>
          fc.assert(
            fc.asyncProperty(
              fc.array(recipes(httpText), { minLength: HTTP_BATCH, maxLength: HTTP_BATCH }),
              async (batch) => {
                const built = batch.map(build);
                const answers = await Promise.all(
                  built.map(({ delivery }) =>
                    sender.send({
                      method: delivery.method,
                      path: PATH,
                      headers: delivery.headers as Record<string, string>,
                      body: delivery.body,
                    }),
                  ),
                );
                built.forEach((b, i) => check(b, answers[i]!.status, answers[i]!.body, dispatched, seen));
              },
            ),
            { numRuns: HTTP_RUNS, ...SEED },
          ),
        );
        expect(errors).toEqual([]);
        expect(seen.sent).toBe(HTTP_RUNS * HTTP_BATCH);
        expect(totalDispatches(dispatched)).toBe(seen.byKind.valid);
        expect(seen.byKind.valid).toBeGreaterThan(0);
        console.info(`[hostile] http: ${JSON.stringify(seen)}`);
      },
      timeoutFor(90_000),
    );
  });
});
