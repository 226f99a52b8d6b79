// The JobTracker contract (src/tracker/job-tracker.ts) as one suite, run against every tracker:
// `trackerContract(target)` inside a test file. Times are given to the tracker by the caller
// (`now` of claimDue, `submittedAt` of track), so the suite needs no waiting.
import { randomUUID } from 'node:crypto';
import type { JobTracker } from 'jobhook/extend';
import { describe, expect, it } from 'vitest';

export interface TrackerTarget {
  /** A tracker of its own (an empty key space), with this lease. */
  make(times: { leaseMs: number; maxAgeMs?: number }): JobTracker | Promise<JobTracker>;
}

const AFTER = 1000;
const LEASE = 5000;
const T0 = 1_800_000_000_000;

export function trackerContract(target: TrackerTarget): void {
  const task = () => `task_${randomUUID()}`;
  const owner = () => randomUUID();
  const tracker = () => target.make({ leaseMs: LEASE });
  const claim = async (t: JobTracker, now: number, limit = 100, who = owner()) =>
    (await t.claimDue({ owner: who, limit, afterMs: AFTER, now })).map((job) => job.taskId);

  describe('the JobTracker contract', () => {
    it('tells its lease and age limit', async () => {
      const t = await target.make({ leaseMs: LEASE, maxAgeMs: 9000 });
      expect(t.leaseMs).toBe(LEASE);
      expect(t.maxAgeMs).toBe(9000);
    });

    it('makes a task due afterMs after its submission, not before', async () => {
      const t = await tracker();
      const a = task();
      await t.track(a, T0);
      expect(await claim(t, T0 + AFTER - 1)).toEqual([]);
      const [job] = await t.claimDue({ owner: owner(), limit: 10, afterMs: AFTER, now: T0 + AFTER });
      expect(job).toEqual({ taskId: a, submittedAt: T0, polls: 1 });
    });

    it('keeps the first submission time when a task is tracked twice', async () => {
      const t = await tracker();
      const a = task();
      await t.track(a, T0);
      await t.track(a, T0 + 50_000);
      expect(await t.pending()).toEqual([{ taskId: a, submittedAt: T0, polls: 0 }]);
    });

    it('hands each due task to one claimant until the lease ends, then to the next', async () => {
      const t = await tracker();
      const a = task();
      await t.track(a, T0);
      const at = T0 + AFTER;
      expect(await claim(t, at)).toEqual([a]);
      expect(await claim(t, at)).toEqual([]);
      expect(await claim(t, at + LEASE - 1)).toEqual([]);
      // The claimant died: the lease ended, the task is due again.
      const [job] = await t.claimDue({ owner: owner(), limit: 10, afterMs: AFTER, now: at + LEASE });
      expect(job).toMatchObject({ taskId: a, polls: 2 });
    });

    it('gives each of 40 tasks to exactly one of 8 concurrent claimants', async () => {
      const t = await tracker();
      const tasks = Array.from({ length: 40 }, task);
      for (const a of tasks) await t.track(a, T0);
      const claims = await Promise.all(Array.from({ length: 8 }, () => claim(t, T0 + AFTER, 10)));
      const all = claims.flat();
      expect(all).toHaveLength(40);
      expect(new Set(all).size).toBe(40);
    });

    it('claims at most `limit`, the oldest first', async () => {
      const t = await tracker();
      const [a, b, c] = [task(), task(), task()];
      await t.track(b, T0 + 2);
      await t.track(a, T0 + 1);
      await t.track(c, T0 + 3);
      expect(await claim(t, T0 + AFTER + 10, 2)).toEqual([a, b]);
      expect(await claim(t, T0 + AFTER + 10, 2)).toEqual([c]);
    });

    it('makes a released task due again at the time its claimant gave', async () => {
      const t = await tracker();
      const a = task();
      await t.track(a, T0);
      const who = owner();
      expect(await claim(t, T0 + AFTER, 10, who)).toEqual([a]);
      await t.release(a, who, T0 + 3 * AFTER);
      expect(await claim(t, T0 + 3 * AFTER - 1)).toEqual([]);
      const [job] = await t.claimDue({ owner: owner(), limit: 10, afterMs: AFTER, now: T0 + 3 * AFTER });
      expect(job).toMatchObject({ taskId: a, polls: 2 });
    });

    it('lets only the holder release: a stale claimant cannot move the task of the one that took over', async () => {
      const t = await tracker();
      const a = task();
      await t.track(a, T0);
      const stale = owner();
      const fresh = owner();
      expect(await claim(t, T0 + AFTER, 10, stale)).toEqual([a]);
      await t.release(a, owner(), T0); // nobody's claim: nothing moves
      expect(await claim(t, T0 + AFTER + 1)).toEqual([]);
      expect(await claim(t, T0 + AFTER + LEASE, 10, fresh)).toEqual([a]);
      await t.release(a, stale, T0 + AFTER + LEASE);
      expect(await claim(t, T0 + AFTER + LEASE + 1)).toEqual([]);
    });

    it('forgets a settled task, claimed or not; a late release of it changes nothing', async () => {
      const t = await tracker();
      const [a, b] = [task(), task()];
      await t.track(a, T0);
      await t.track(b, T0);
      const who = owner();
      expect((await claim(t, T0 + AFTER, 1, who)).length).toBe(1);
      await t.settle(a);
      await t.settle(b);
      await t.release(a, who, T0);
      await t.release(b, who, T0);
      expect(await claim(t, T0 + 10 * LEASE)).toEqual([]);
      expect(await t.pending()).toEqual([]);
    });

    it('tracks a settled task again when told to (its outcome may come once more)', async () => {
      const t = await tracker();
      const a = task();
      await t.track(a, T0);
      await t.settle(a);
      await t.track(a, T0 + 5);
      expect(await t.pending()).toEqual([{ taskId: a, submittedAt: T0 + 5, polls: 0 }]);
    });

    it('lists what is tracked, oldest first, with polls so far, at most `limit`', async () => {
      const t = await tracker();
      const [a, b, c] = [task(), task(), task()];
      await t.track(c, T0 + 30);
      await t.track(a, T0 + 10);
      await t.track(b, T0 + 20);
      await claim(t, T0 + 10 + AFTER, 1);
      expect(await t.pending()).toEqual([
        { taskId: a, submittedAt: T0 + 10, polls: 1 },
        { taskId: b, submittedAt: T0 + 20, polls: 0 },
        { taskId: c, submittedAt: T0 + 30, polls: 0 },
      ]);
      expect((await t.pending({ limit: 2 })).map((job) => job.taskId)).toEqual([a, b]);
    });

    it('knows a tracked task (for its tenant, or for any when none is given) until it is settled', async () => {
      const t = await tracker();
      const a = task();
      const b = task();
      await t.track(a, T0, 'tenant-a');
      await t.track(b, T0);
      expect(await t.has!(a, 'tenant-a')).toBe(true);
      expect(await t.has!(a, 'tenant-b')).toBe(false);
      expect(await t.has!(a)).toBe(true);
      expect(await t.has!(b)).toBe(true);
      expect(await t.has!(task())).toBe(false);
      await t.settle(a);
      expect(await t.has!(a)).toBe(false);
    });

    it('settles a task tracked for a tenant only for that tenant, or for any when none is given', async () => {
      const t = await tracker();
      const [a, b] = [task(), task()];
      await t.track(a, T0, 'tenant-a');
      await t.track(b, T0, 'tenant-a');
      // Another tenant's webhook, signed with its own secret, carries a's task id: nothing moves.
      await t.settle(a, 'tenant-b');
      expect((await t.pending()).map((job) => job.taskId).sort()).toEqual([a, b].sort());
      await t.settle(a, 'tenant-a');
      // A receiver with one secret has no tenants: it settles whatever the task's tenant.
      await t.settle(b);
      expect(await t.pending()).toEqual([]);
    });

    it('settles a task tracked without a tenant with no tenant, never with one', async () => {
      const t = await tracker();
      const a = task();
      await t.track(a, T0);
      await t.settle(a, 'tenant-a');
      expect(await t.pending()).toStrictEqual([{ taskId: a, submittedAt: T0, polls: 0 }]);
      await t.settle(a);
      expect(await t.pending()).toEqual([]);
    });

    it('tells each claimed and listed task its tenant, and none to a task tracked without one', async () => {
      const t = await tracker();
      const [a, b] = [task(), task()];
      await t.track(a, T0, 'tenant-a');
      await t.track(b, T0 + 1);
      const claimed = await t.claimDue({ owner: owner(), limit: 10, afterMs: AFTER, now: T0 + 1 + AFTER });
      expect(claimed).toStrictEqual([
        { taskId: a, submittedAt: T0, polls: 1, tenant: 'tenant-a' },
        { taskId: b, submittedAt: T0 + 1, polls: 1 },
      ]);
      expect(await t.pending()).toStrictEqual([
        { taskId: a, submittedAt: T0, polls: 1, tenant: 'tenant-a' },
        { taskId: b, submittedAt: T0 + 1, polls: 1 },
      ]);
    });

    it('keeps the first tenant when a task is tracked twice', async () => {
      const t = await tracker();
      const [a, b] = [task(), task()];
      await t.track(a, T0, 'tenant-a');
      await t.track(a, T0 + 5, 'tenant-b');
      await t.track(b, T0 + 1);
      await t.track(b, T0 + 6, 'tenant-b');
      expect(await t.pending()).toStrictEqual([
        { taskId: a, submittedAt: T0, polls: 0, tenant: 'tenant-a' },
        { taskId: b, submittedAt: T0 + 1, polls: 0 },
      ]);
      await t.settle(a, 'tenant-b');
      await t.settle(b, 'tenant-b');
      expect((await t.pending()).map((job) => job.taskId)).toEqual([a, b]);
    });

    it('refuses a tenant that is not a non-empty string', async () => {
      const t = await tracker();
      const a = task();
      await expect(Promise.resolve().then(() => t.track(a, T0, ''))).rejects.toThrow(/tenant/);
      await expect(Promise.resolve().then(() => t.track(a, T0, 7 as never))).rejects.toThrow(/tenant/);
      await expect(Promise.resolve().then(() => t.settle(a, ''))).rejects.toThrow(/tenant/);
      await expect(Promise.resolve().then(() => t.settle(a, null as never))).rejects.toThrow(/tenant/);
      expect(await t.pending()).toEqual([]);
    });

    it('refuses a task id that is no id', async () => {
      const t = await tracker();
      await expect(Promise.resolve().then(() => t.track(''))).rejects.toThrow(/task id/);
      await expect(Promise.resolve().then(() => t.track(undefined as never))).rejects.toThrow(/task id/);
    });
  });
}
