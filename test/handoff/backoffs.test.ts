// The engines' pauses, taken from the one back-off (src/common/backoff.ts), are those they had
// when each wrote its own: the NATS worker's retries (2 s doubling, 9 pauses), the pauses between
// tries at an ack or a done key (50 ms doubling to 1 s), pg-boss's tries at storing an outcome
// (50 ms doubling to 2 s) and at creating its queue (a random part of 100, 200, 400 ms).
import { describe, expect, it } from 'vitest';
import { backoffDelay } from '../../src/common/backoff.js';
import { RESEND_BACKOFF, DEFAULT_BACKOFF_MS } from '../../src/nats/worker.js';
import { QUEUE_CREATION_BACKOFF } from '../../src/pg-boss/queue.js';
import { SETTLE_BACKOFF } from '../../src/pg-boss/settle.js';

const first = (n: number, backoff: Parameters<typeof backoffDelay>[0], random?: () => number) =>
  Array.from({ length: n }, (_, i) => backoffDelay(backoff, i + 1, random));

describe("the hand-off engines' pauses", () => {
  it('NATS: retries 2 s doubling to 512 s; resent acks and done keys 50 ms doubling to 1 s', () => {
    expect(DEFAULT_BACKOFF_MS).toEqual([2000, 4000, 8000, 16_000, 32_000, 64_000, 128_000, 256_000, 512_000]);
    expect(first(7, RESEND_BACKOFF)).toEqual([50, 100, 200, 400, 800, 1000, 1000]);
  });

  it('pg-boss: outcomes 50 ms doubling to 2 s; queue creation a random part of 100, 200, 400 ms', () => {
    expect(first(8, SETTLE_BACKOFF)).toEqual([50, 100, 200, 400, 800, 1600, 2000, 2000]);
    expect(first(3, QUEUE_CREATION_BACKOFF, () => 1)).toEqual([100, 200, 400]);
    expect(first(3, QUEUE_CREATION_BACKOFF, () => 0.5)).toEqual([50, 100, 200]);
  });
});
