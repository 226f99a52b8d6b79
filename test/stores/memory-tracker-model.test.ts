// Issue 33.4: memoryJobTracker takes the next due tasks from heaps instead of walking and sorting
// every entry on each claim. Against a plain model of the JobTracker contract (every entry
// walked and sorted, as the tracker did before), over generated runs with many ties, its answers
// are the same, order included, tenants too (settled only for their own tenant, or for none);
// and a claim or a listing among many tracked tasks looks at the tasks it returns and few others
// (counted as reads of their submission time, not timed).
import fc from 'fast-check';
import { memoryJobTracker } from 'jobhook';
import type { TrackedJob } from 'jobhook/extend';
import { expect, test } from 'vitest';

interface ModelEntry {
  taskId: string;
  submittedAt: number;
  polls: number;
  tenant: string | undefined;
  owner: string | undefined;
  dueAt: number | undefined;
}

/** The contract, written as plainly as possible: a Map in tracking order, walked and sorted. */
function model(leaseMs: number) {
  const entries = new Map<string, ModelEntry>();
  const view = (e: ModelEntry): TrackedJob => ({
    taskId: e.taskId,
    submittedAt: e.submittedAt,
    polls: e.polls,
    ...(e.tenant === undefined ? {} : { tenant: e.tenant }),
  });
  return {
    track(taskId: string, submittedAt: number, tenant: string | undefined) {
      if (!entries.has(taskId))
        entries.set(taskId, { taskId, submittedAt, polls: 0, tenant, owner: undefined, dueAt: undefined });
    },
    settle(taskId: string, tenant: string | undefined) {
      if (tenant === undefined || entries.get(taskId)?.tenant === tenant) entries.delete(taskId);
    },
    claimDue(owner: string, limit: number, afterMs: number, at: number) {
      const due = [...entries.values()]
        .map((entry) => ({ entry, at: entry.dueAt ?? entry.submittedAt + afterMs }))
        .filter((d) => d.at <= at)
        .sort((a, b) => a.at - b.at);
      return due.slice(0, Math.max(0, limit)).map(({ entry }) => {
        entry.owner = owner;
        entry.polls++;
        entry.dueAt = at + leaseMs;
        return view(entry);
      });
    },
    release(taskId: string, owner: string, nextPollAt: number) {
      const entry = entries.get(taskId);
      if (!entry || entry.owner !== owner) return;
      entry.owner = undefined;
      entry.dueAt = nextPollAt;
    },
    pending(limit?: number) {
      return [...entries.values()]
        .sort((a, b) => a.submittedAt - b.submittedAt)
        .slice(0, limit ?? 100)
        .map(view);
    },
  };
}

const id = fc.integer({ min: 0, max: 30 }).map((n) => `task_${n}`);
const owner = fc.constantFrom('a', 'b', 'c');
const tenant = fc.option(fc.constantFrom('t1', 't2'), { nil: undefined });
const step = fc.oneof(
  {
    arbitrary: fc.record({
      op: fc.constant('track' as const),
      id,
      at: fc.integer({ min: 0, max: 20 }),
      tenant,
    }),
    weight: 4,
  },
  { arbitrary: fc.record({ op: fc.constant('settle' as const), id, tenant }), weight: 1 },
  {
    arbitrary: fc.record({
      op: fc.constant('claim' as const),
      owner,
      limit: fc.oneof(fc.integer({ min: 0, max: 6 }), fc.constantFrom(-1, 2.5, 100)),
      afterMs: fc.constantFrom(0, 5, 10),
    }),
    weight: 4,
  },
  {
    arbitrary: fc.record({
      op: fc.constant('release' as const),
      id,
      owner,
      delayMs: fc.integer({ min: -5, max: 30 }),
    }),
    weight: 3,
  },
  {
    arbitrary: fc.record({
      op: fc.constant('pending' as const),
      limit: fc.option(fc.oneof(fc.integer({ min: -3, max: 12 }), fc.constant(1.5)), { nil: undefined }),
    }),
    weight: 1,
  },
  {
    arbitrary: fc.record({ op: fc.constant('tick' as const), ms: fc.integer({ min: 0, max: 15 }) }),
    weight: 2,
  },
);

test('answers as the model does, order included, run after run', () => {
  fc.assert(
    fc.property(
      fc.integer({ min: 1, max: 20 }),
      fc.array(step, { minLength: 1, maxLength: 300 }),
      (leaseMs, steps) => {
        let now = 0;
        const tracker = memoryJobTracker({ leaseMs, now: () => now });
        const plain = model(leaseMs);
        for (const s of steps) {
          if (s.op === 'track') {
            tracker.track(s.id, s.at, s.tenant);
            plain.track(s.id, s.at, s.tenant);
          } else if (s.op === 'settle') {
            tracker.settle(s.id, s.tenant);
            plain.settle(s.id, s.tenant);
          } else if (s.op === 'claim') {
            const request = { owner: s.owner, limit: s.limit, afterMs: s.afterMs, now };
            expect(tracker.claimDue(request)).toEqual(plain.claimDue(s.owner, s.limit, s.afterMs, now));
          } else if (s.op === 'release') {
            tracker.release(s.id, s.owner, now + s.delayMs);
            plain.release(s.id, s.owner, now + s.delayMs);
          } else if (s.op === 'pending') {
            const options = s.limit === undefined ? undefined : { limit: s.limit };
            expect(tracker.pending(options)).toEqual(plain.pending(s.limit));
          } else {
            now += s.ms;
          }
          expect(tracker.size).toBe(plain.pending(Infinity).length);
        }
        expect(tracker.pending({ limit: Infinity })).toEqual(plain.pending(Infinity));
      },
    ),
    { numRuns: 300 },
  );
});

/**
 * A submission time whose every read is counted: the tracker reads it each time it looks at the
 * task (to tell whether it is due, or to order it), so the count says how many tasks it examined.
 */
function countedTimes() {
  const counter = { reads: 0 };
  const time = (ms: number) => ({ valueOf: () => (counter.reads++, ms) }) as unknown as number;
  return { counter, time };
}

const TASKS = 200_000;
const T0 = 1_800_000_000_000;

test(`claimDue({ limit: 50 }) among ${TASKS} overdue tasks looks at the tasks it takes and few others`, () => {
  const { counter, time } = countedTimes();
  const tracker = memoryJobTracker();
  for (let i = 0; i < TASKS; i++) tracker.track(`task_${i}`, time(T0 + ((i * 7919) % TASKS)));
  for (let pass = 1; pass <= 3; pass++) {
    counter.reads = 0;
    const claimed = tracker.claimDue({ owner: `o${pass}`, limit: 50, afterMs: 0, now: T0 + TASKS });
    expect(claimed).toHaveLength(50);
    // The oldest first: submission times 0-49, then 50-99, then 100-149 after T0.
    expect(claimed.map((job) => Number(job.submittedAt) - T0)).toEqual(
      Array.from({ length: 50 }, (_, i) => 50 * (pass - 1) + i),
    );
    // Walking every entry reads each submission time at least once: 200,000 reads.
    expect(counter.reads).toBeLessThan(20_000);
  }
});

test(`pending({ limit: 10 }) among ${TASKS} tasks looks at few of them`, () => {
  const { counter, time } = countedTimes();
  const tracker = memoryJobTracker();
  for (let i = 0; i < TASKS; i++) tracker.track(`task_${i}`, time(T0 + TASKS - i));
  counter.reads = 0;
  const oldest = tracker.pending({ limit: 10 });
  expect(oldest.map((job) => job.taskId)).toEqual(
    Array.from({ length: 10 }, (_, i) => `task_${TASKS - 1 - i}`),
  );
  // Sorting every entry reads the submission times millions of times.
  expect(counter.reads).toBeLessThan(2_000);
});
