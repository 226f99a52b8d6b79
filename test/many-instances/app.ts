// The app every process of the many-instances test runs: one receiver with one handler for both
// job events, whose side effect is recorded in the shared service with this process's pid. The
// receiver processes mount it; the hand-off's worker processes run its handlers for queued jobs.
import { setTimeout as sleep } from 'node:timers/promises';
import { createReceiver, type ReceiverOptions } from 'jobhook';

/** Records that this process handled the event once more. */
export type Effect = (eventId: string) => Promise<unknown>;

export function app(options: Omit<ReceiverOptions, 'secret'>, effect: Effect) {
  const secret = JSON.parse(process.env.SECRETS ?? '[]') as string[];
  const handle = async (event: { id: string }) => {
    // Work that takes a while, so that a SIGKILL or a Redis restart finds handlers in the middle.
    await sleep(Math.random() * 10);
    await effect(event.id);
  };
  return createReceiver({ ...options, secret })
    .onJobCompleted(handle)
    .onJobFailed(handle);
}
