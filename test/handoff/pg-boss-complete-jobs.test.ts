// completeJobs' bookkeeping for a batch whose completion keeps failing: each try after the first
// carries only the jobs that have not expired (a job past its expiry may be running again on
// another worker), and each job left out is reported. A real cut connection under a batch is
// test/handoff/pg-boss-lost-completion.test.ts; here a stand-in for the boss fails on cue, since
// PostgreSQL cannot be made to fail exactly the first two tries of one statement.
import type PgBoss from 'pg-boss';
import { describe, expect, it } from 'vitest';
import { completeJobs } from '../../src/pg-boss/settle.js';

function failingBoss(failures: number) {
  const calls: string[][] = [];
  const boss = {
    complete: async (_queue: string, ids: string[]) => {
      calls.push([...ids]);
      if (calls.length <= failures) throw new Error('Connection terminated unexpectedly');
    },
  } as unknown as PgBoss;
  return { boss, calls };
}

describe('completeJobs (pg-boss)', () => {
  it('tries the batch again less the jobs that expired meanwhile, and reports each of those', async () => {
    const { boss, calls } = failingBoss(2);
    const errors: Error[] = [];
    const now = Date.now();
    const jobs = [
      { id: 'a', expiresAt: now + 60_000 },
      { id: 'b', expiresAt: now + 20 }, // expires during the first pause (50 ms)
    ];
    await completeJobs(boss, 'jobhook', jobs, (error) => errors.push(error));
    expect(calls).toEqual([['a', 'b'], ['a'], ['a']]);
    expect(errors).toHaveLength(1);
    expect(errors[0]!.message).toMatch(
      /^pg-boss job b: its completion could not be stored before the job expired: Connection terminated/,
    );
  });

  it('tries a job that expired before its batch was sent once, and reports nothing when that lands', async () => {
    const { boss, calls } = failingBoss(0);
    const errors: Error[] = [];
    await completeJobs(boss, 'jobhook', [{ id: 'late', expiresAt: Date.now() - 1 }], (e) => errors.push(e));
    expect(calls).toEqual([['late']]);
    expect(errors).toEqual([]);
  });
});
