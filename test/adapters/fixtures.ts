// Deliveries in the design's payload shape, and a receiver that records what its handlers saw.
import { createReceiver, type Receiver } from 'jobhook';
import { SECRET } from '../fixtures.js';

/** Small, so that oversized bodies are cheap to send. */
export const LIMIT = 4096;

// One set of payload builders for every suite.
export { SECRET, completedPayload as completed, failedPayload as failed } from '../fixtures.js';
/** The receiver's JSON answers, and the test routes' own. */
export interface JsonAnswer {
  ok?: boolean;
  duplicate?: boolean;
  error?: { code: string; message: string };
  route?: string;
}

export interface Recorded {
  type: 'job.completed' | 'job.failed' | 'any';
  event: unknown;
}

export interface RecordingReceiver {
  receiver: Receiver;
  /** Every handler call, in order. */
  calls: Recorded[];
  /** Everything jobhook logged at error level. */
  errors: string[];
  /** The next `failures` job.completed handler calls throw. */
  failNext(failures: number): void;
}

export function recordingReceiver(): RecordingReceiver {
  const calls: Recorded[] = [];
  const errors: string[] = [];
  let failures = 0;
  const receiver = createReceiver({
    secret: SECRET,
    maxBodyBytes: LIMIT,
    logger: { error: (message) => errors.push(message), warn: () => undefined },
  });
  receiver.onJobCompleted((event) => {
    calls.push({ type: 'job.completed', event });
    if (failures > 0) {
      failures--;
      throw new Error('the handler failed on purpose');
    }
  });
  receiver.onJobFailed((event) => void calls.push({ type: 'job.failed', event }));
  receiver.onAny((event) => void calls.push({ type: 'any', event }));
  receiver.onError(() => undefined);
  return { receiver, calls, errors, failNext: (n) => (failures = n) };
}
