import { ignore } from '../common/logging.js';
import type { ReceiverResponse } from './answers.js';

/**
 * A body left unread by an answer given before it was read to its end: a refusal on the signature
 * headers, a body over the limit (issue 33). Left as it is, the rest of the body stalls the
 * connection: the next request a keep-alive client or a proxy sends on it waits until a time-out
 * resets it, and fails. Closed at once, the connection is reset under a proxy still sending the
 * body, which then answers 502 in place of the refusal. So, before the answer goes, the rest is read
 * and dropped, within a bound: once it has ended, the connection carries the next request; larger
 * or slower than the bound, or cut off, the answer closes the connection ({@link closing}). The
 * Node adapters do it on the request's stream (adapters/node-stream.ts), `receiver.fetch` on the
 * request's body ({@link discardWebBody}).
 */

/** The most of a body left unread that is read and dropped before an answer (Go's net/http also reads 256 KiB). */
export const DISCARD_BYTES = 256 * 1024;
/** The longest a body left unread is waited for before an answer. */
export const DISCARD_MS = 1000;

/** `answer` with `Connection: close`: the server closes the connection once the answer is sent. */
export function closing(answer: ReceiverResponse): ReceiverResponse {
  if (answer.headers.connection === 'close') return answer;
  return { status: answer.status, headers: { ...answer.headers, connection: 'close' }, body: answer.body };
}

/**
 * Reads and drops what is left of a Web body stream, within {@link DISCARD_BYTES} and
 * {@link DISCARD_MS} (`declared`: the request's declared length, -1 for none): true once it has
 * ended, false when it was larger, slower, or failed; the stream is then cancelled.
 */
export async function discardWebBody(stream: ReadableStream<Uint8Array>, declared: number): Promise<boolean> {
  if (declared > DISCARD_BYTES) {
    await stream.cancel().catch(ignore);
    return false;
  }
  const reader = stream.getReader();
  let left = DISCARD_BYTES;
  let late = false;
  const timer = setTimeout(() => {
    late = true;
    void reader.cancel().catch(ignore);
  }, DISCARD_MS);
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
    clearTimeout(timer);
  }
}
