// The client's one timer for many waits: wake-ups in order, one setTimeout whatever their number,
// and nothing left once the queue is empty.
import { expect, test } from 'vitest';
import { timerQueue } from '../../src/client/wait-for.js';
import { deferred } from '../fixtures.js';

const timeouts = () => process.getActiveResourcesInfo().filter((name) => name === 'Timeout').length;

test('wakes sleepers in time order on a single timer, and holds none once empty', async () => {
  const before = timeouts();
  const queue = timerQueue();
  const woken: number[] = [];
  const start = Date.now();
  // 1,000 sleepers, scheduled out of order, two of them rescheduled and one cancelled.
  const sleepers = Array.from({ length: 1000 }, (_, index) => ({ wake: () => woken.push(index) }));
  sleepers.forEach((sleeper, index) => queue.schedule(sleeper, start + ((index * 7919) % 1000) / 50));
  queue.schedule(sleepers[0]!, start + 25);
  queue.schedule(sleepers[1]!, start + 1);
  queue.cancel(sleepers[2]!);
  expect(timeouts() - before).toBe(1);
  expect(queue.size).toBe(999);

  await new Promise((resolve) => setTimeout(resolve, 60));
  expect(woken).toHaveLength(999);
  expect(woken).not.toContain(2);
  expect(woken.at(-1)).toBe(0);
  expect(queue.size).toBe(0);
  // At most as many as before: a timer of the test runner's that was active at the start may have
  // ended meanwhile (seen on a busy machine), but the queue's own must be gone.
  expect(timeouts()).toBeLessThanOrEqual(before);
});

test('a sleeper may schedule itself again from wake()', async () => {
  const queue = timerQueue();
  let count = 0;
  // Waits for the fifth wake itself, not for a time it should take: a busy machine is late.
  const fifth = deferred();
  const sleeper = {
    wake() {
      if (++count < 5) queue.schedule(sleeper, Date.now() + 1);
      else fifth.resolve();
    },
  };
  queue.schedule(sleeper, Date.now());
  await fifth.promise;
  expect(count).toBe(5);
  expect(queue.size).toBe(0);
});

test('cancelling the last sleeper clears the timer at once', () => {
  const before = timeouts();
  const queue = timerQueue();
  const sleeper = { wake: () => undefined };
  queue.schedule(sleeper, Date.now() + 60_000);
  expect(timeouts() - before).toBe(1);
  queue.cancel(sleeper);
  expect(timeouts()).toBe(before);
});
