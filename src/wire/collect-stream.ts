import { ignore } from '../common/logging.js';
import { BodyCollector, BodyReadError, onBodyAbort, type CollectLimits } from './read-body.js';

/**
 * The two capped body collectors, one per kind of stream: every body jobhook reads goes through
 * one of them (the receiver's adapters, the client's reading of the gateway's answers, the gateway
 * simulator's requests). Each keeps at most `maxBytes` (in one buffer, see {@link BodyCollector}),
 * refuses a declared length over it before reading, stops once the stream passes it, and stops
 * when `signal` aborts; each rejects with a {@link BodyReadError}, never with what the stream threw.
 */

/** Limits of `maxBytes` and `timeoutMs`, for readers outside the receiver (which has its own deadlines). */
export function limitsWithin(maxBytes: number, timeoutMs: number): CollectLimits {
  return { maxBytes, signal: AbortSignal.timeout(timeoutMs) };
}

/** A declared body length (`Content-Length`), or -1 when none is declared or it is not a length. */
export function declaredLength(header: string | null | undefined): number {
  if (header === undefined || header === null) return -1;
  const length = Number(header);
  return Number.isSafeInteger(length) && length >= 0 ? length : -1;
}

/**
 * What the Node collector uses of a stream; a Node `Readable` (an `IncomingMessage`) has it. Typed
 * here rather than imported from node:stream: this layer runs on every runtime.
 */
export interface NodeByteStream {
  readonly readable: boolean;
  readonly readableEncoding: string | null;
  on(event: 'data', listener: (chunk: Uint8Array) => void): unknown;
  on(event: 'end' | 'close', listener: () => void): unknown;
  on(event: 'error', listener: (error: unknown) => void): unknown;
  removeListener(event: 'data', listener: (chunk: Uint8Array) => void): unknown;
  pause(): unknown;
}

/**
 * Collects a Node stream's bytes within `limits`; `declared` is the length the sender declared
 * (-1 for none): a declared length over the limit is refused before anything is read, and a
 * stream that ends short of it is `unreadable`. Rejects with `too_large`, or `unreadable` for a
 * body that never fully arrived (an aborted upload, a stream error, a stream already read or
 * decoded to text, `signal` aborted). On a refusal the stream is paused, with the rest unread:
 * what becomes of it is the caller's choice (a server answers and closes or drains the connection).
 *
 * It adds four listeners and removes none on success (removing them cost more per delivery than the
 * rest of reading a small body: bench/NOTES.md): the stream is done with, and a later `error` must
 * still find a listener.
 */
export function collectNodeStream(
  stream: NodeByteStream,
  limits: CollectLimits,
  declared = -1,
): Promise<Uint8Array> {
  const { maxBytes } = limits;
  if (declared > maxBytes) return Promise.reject(new BodyReadError('too_large'));
  if (!stream.readable || stream.readableEncoding !== null) {
    return Promise.reject(new BodyReadError('unreadable'));
  }
  return new Promise((resolve, reject) => {
    const body = new BodyCollector(maxBytes);
    let settled = false;
    const fail = (reason: 'too_large' | 'unreadable', cause?: unknown) => {
      if (settled) return;
      settled = true;
      stopListening();
      stream.removeListener('data', onData);
      stream.pause();
      reject(new BodyReadError(reason, { cause }));
    };
    const onData = (chunk: Uint8Array) => {
      if (settled) return;
      if (!body.add(chunk)) fail('too_large');
    };
    const stopListening = onBodyAbort(limits, () => fail('unreadable'));
    stream.on('data', onData);
    stream.on('end', () => {
      if (settled) return;
      if (declared >= 0 && body.length !== declared) return fail('unreadable');
      settled = true;
      stopListening();
      resolve(body.bytes());
    });
    stream.on('error', (error) => fail('unreadable', error));
    // Closed before its end: the upload was cut off.
    stream.on('close', () => fail('unreadable'));
  });
}

const EMPTY = new Uint8Array(0);

/**
 * Collects a Web stream's bytes within `limits`; a `null` stream is an empty body. `declared` (-1
 * for none) is only compared with the limit: a fetch `Response` declares its length as sent, and
 * its stream gives the bytes decoded (and fetch itself checks the length). A body over the limit is refused with the stream left unlocked
 * and the rest unread, for the caller to cancel or drain; a declared length over it, before
 * anything is read, with the stream cancelled; once `signal` aborts, the stream is cancelled.
 * Whatever fails rejects with a {@link BodyReadError} (`unreadable` with what the stream threw as
 * its `cause`).
 */
export async function collectWebStream(
  stream: ReadableStream<Uint8Array> | null,
  limits: CollectLimits,
  declared = -1,
): Promise<Uint8Array> {
  if (stream === null) return EMPTY;
  if (declared > limits.maxBytes) {
    await stream.cancel().catch(ignore);
    throw new BodyReadError('too_large');
  }
  try {
    const reader = stream.getReader();
    let cancelled = false;
    const cancel = () => {
      cancelled = true;
      void reader.cancel().catch(ignore);
    };
    const stopListening = onBodyAbort(limits, cancel);
    try {
      const body = new BodyCollector(limits.maxBytes);
      for (;;) {
        const { done, value } = await reader.read();
        if (done) break;
        if (!body.add(value)) {
          // The rest is left to the caller: cancelled, or read and dropped (unread-body.ts).
          reader.releaseLock();
          throw new BodyReadError('too_large');
        }
      }
      // A cancelled stream ends early: what came is not the body.
      if (cancelled) throw new BodyReadError('unreadable');
      return body.bytes();
    } finally {
      stopListening();
    }
  } catch (error) {
    throw error instanceof BodyReadError ? error : new BodyReadError('unreadable', { cause: error });
  }
}
