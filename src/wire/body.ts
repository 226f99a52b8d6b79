import { decodeUtf8 } from '#runtime';
import { utf8Bytes } from '../common/bytes.js';
import { deadlines } from '../common/deadline.js';
import { ignore } from '../common/logging.js';
import { answers, type ReceiverResponse } from './answers.js';

/** A delivery's body as adapters hand it over, exactly as received. */
export type BodyInput = Uint8Array | ArrayBuffer | string;

/** The raw bytes of a body, or `undefined` when what was given is not raw (a parsed object). */
export function rawBytes(body: unknown): Uint8Array | undefined {
  if (body instanceof Uint8Array) return body;
  if (typeof body === 'string') return utf8Bytes(body);
  if (body instanceof ArrayBuffer) return new Uint8Array(body);
  return undefined;
}

export type Decoded = { ok: true; value: unknown } | { ok: false; message: string };

/** The JSON of a body; one not UTF-8 (RFC 8259) is refused, not altered; a well-formed string is parsed as is. */
export function decodeJson(body: Uint8Array | string): Decoded {
  let text =
    typeof body !== 'string' ? decodeUtf8(body) : isWellFormed(body) ? body : decodeUtf8(utf8Bytes(body));
  if (text === undefined) return { ok: false, message: 'The body is not valid UTF-8.' };
  if (text.charCodeAt(0) === 0xfeff) text = text.slice(1);
  try {
    return { ok: true, value: JSON.parse(text) };
  } catch {
    return { ok: false, message: 'The body is not valid JSON.' };
  }
}

/** `String#isWellFormed` (no lone surrogate), typed here: TypeScript's ES2022 lib lacks it. */
export function isWellFormed(text: string): boolean {
  return (text as string & { isWellFormed(): boolean }).isWellFormed();
}

/** A body collector's limits: at most `maxBytes`, and to stop once `signal` (if any) aborts. */
export interface CollectLimits {
  maxBytes: number;
  signal?: AbortSignal | undefined;
}

/** What the receiver allows a body reader: at most `maxBytes`, and to stop once `signal` aborts. */
export interface BodyLimits {
  maxBytes: number;
  /** Aborted when the body took longer than the receiver's `bodyTimeoutMs`: stop reading. */
  signal: AbortSignal;
}

/** A body read on demand, once the method and signature headers passed; rejects with a {@link BodyReadError}. */
export type BodyReader = (limits: BodyLimits) => Promise<BodyInput>;

/** Why a body reader gave up: `too_large` (past `maxBytes`) or `unreadable` (it never fully arrived). */
export class BodyReadError extends Error {
  override readonly name = 'BodyReadError';
  constructor(
    readonly reason: 'too_large' | 'unreadable',
    options?: { cause?: unknown },
  ) {
    super(reason === 'too_large' ? 'The body is over the limit.' : 'The body could not be read.', options);
  }
}

/** A body read, its answer when it failed: what {@link readBodyWithin} resolves with. */
export type ReadBody = (reader: BodyReader) => Promise<Uint8Array | ReceiverResponse>;

/** The receiver's body reads, within `maxBytes` (413) and `timeoutMs` (408): the bytes or the answer. */
export function readBodyWithin(maxBytes: number, timeoutMs: number): ReadBody {
  const due = timeoutMs > 0 && Number.isFinite(timeoutMs) ? deadlines(timeoutMs) : undefined;
  return (reader) =>
    new Promise((resolve) => {
      const limits = new BodyReading(maxBytes);
      let done = false;
      const finish = (answer: Uint8Array | ReceiverResponse) => {
        if (done) return;
        done = true;
        deadline?.cancel();
        resolve(answer);
      };
      const deadline = due?.start(() => {
        BodyReading.abort(limits);
        finish(answers.bodyTimeout(timeoutMs));
      });
      const failed = (error: unknown) =>
        finish(
          error instanceof BodyReadError && error.reason === 'too_large'
            ? answers.tooLarge(maxBytes)
            : answers.bodyUnreadable(),
        );
      let read: Promise<BodyInput>;
      try {
        read = reader(limits);
      } catch (error) {
        return failed(error);
      }
      // A reader that rejects after the time-out was answered is ignored, never unhandled.
      Promise.resolve(read).then((bytes) => finish(rawBytes(bytes) ?? answers.bodyUnreadable()), failed);
    });
}

/** The limits one body is read under; `signal` is made only when read (jobhook uses {@link onBodyAbort}). */
export class BodyReading implements BodyLimits {
  #controller: AbortController | undefined = undefined;
  #aborted = false;
  #stops: (() => void)[] | undefined = undefined;

  constructor(readonly maxBytes: number) {}

  get signal(): AbortSignal {
    if (!this.#controller) {
      this.#controller = new AbortController();
      if (this.#aborted) this.#controller.abort();
    }
    return this.#controller.signal;
  }

  /** The receiver gave up on the body (its time is up): tells the reader, once. */
  static abort(reading: BodyReading): void {
    if (reading.#aborted) return;
    reading.#aborted = true;
    reading.#controller?.abort();
    const stops = reading.#stops;
    reading.#stops = undefined;
    for (const stop of stops ?? []) stop();
  }

  // Static, so that a reader given these limits sees only `maxBytes` and `signal`.
  static onAbort(reading: BodyReading, stop: () => void): () => void {
    if (reading.#aborted) {
      stop();
      return ignore;
    }
    (reading.#stops ??= []).push(stop);
    return () => {
      const at = reading.#stops?.indexOf(stop) ?? -1;
      if (at >= 0) reading.#stops!.splice(at, 1);
    };
  }
}

/** Calls `stop` once the reader must give up on the body (at once if it must); returns how to stop listening. */
export function onBodyAbort(limits: CollectLimits, stop: () => void): () => void {
  if (limits instanceof BodyReading) return BodyReading.onAbort(limits, stop);
  const { signal } = limits;
  if (signal === undefined) return ignore;
  if (signal.aborted) {
    stop();
    return ignore;
  }
  signal.addEventListener('abort', stop, { once: true });
  return () => signal.removeEventListener('abort', stop);
}
