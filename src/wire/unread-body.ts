import { deadline } from '../common/deadline.js';
import { ignore } from '../common/logging.js';
import type { ReceiverResponse } from './answers.js';

// A body an early answer left unread would stall the connection (docs/design.md, "A body left unread").

/** The most of a body left unread that is read and dropped before an answer (as Go's net/http). */
export const DISCARD_BYTES = 256 * 1024;
/** The longest a body left unread is waited for before an answer. */
export const DISCARD_MS = 1000;

/** `answer` with `Connection: close`: the server closes the connection once the answer is sent. */
export function closing(answer: ReceiverResponse): ReceiverResponse {
  if (answer.headers.connection === 'close') return answer;
  return { status: answer.status, headers: { ...answer.headers, connection: 'close' }, body: answer.body };
}

/** Reads and drops the rest of a Web body within the bounds above: true once it ended; else it is cancelled. */
export async function discardWebBody(stream: ReadableStream<Uint8Array>, declared: number): Promise<boolean> {
  if (declared > DISCARD_BYTES) {
    await stream.cancel().catch(ignore);
    return false;
  }
  const reader = stream.getReader();
  let left = DISCARD_BYTES;
  let late = false;
  const due = deadline(DISCARD_MS, () => {
    late = true;
    void reader.cancel().catch(ignore);
  });
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) return !late;
      left -= value.byteLength;
      if (left < 0) {
        void reader.cancel().catch(ignore);
        return false;
      }
    }
  } catch {
    return false;
  } finally {
    due.cancel();
  }
}
