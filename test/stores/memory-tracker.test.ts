// The in-memory tracker against the shared contract.
import { JobhookError, memoryJobTracker } from 'jobhook';
import { expect, it } from 'vitest';
import { trackerContract } from './tracker-contract.js';

trackerContract({ make: (times) => memoryJobTracker(times) });

it('refuses times that are not positive whole ms, naming the option', () => {
  expect(() => memoryJobTracker({ leaseMs: 0 })).toThrow(JobhookError);
  expect(() => memoryJobTracker({ maxAgeMs: 1.5 })).toThrow(/maxAgeMs/);
});

it('defaults to a 2 min lease and 7 days of tracking', () => {
  const tracker = memoryJobTracker();
  expect(tracker.leaseMs).toBe(120_000);
  expect(tracker.maxAgeMs).toBe(7 * 24 * 3600 * 1000);
});
