import { decodeUtf8 } from '#runtime';
import { utf8Bytes } from '../common/bytes.js';

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

/** JSON text is UTF-8 (RFC 8259): a body that is not is refused rather than silently altered. */
export function decodeJson(bytes: Uint8Array): Decoded {
  let text = decodeUtf8(bytes);
  if (text === undefined) return { ok: false, message: 'The body is not valid UTF-8.' };
  if (text.charCodeAt(0) === 0xfeff) text = text.slice(1);
  try {
    return { ok: true, value: JSON.parse(text) };
  } catch {
    return { ok: false, message: 'The body is not valid JSON.' };
  }
}

/** What the receiver allows a body reader: at most `maxBytes`, and to stop once `signal` aborts. */
export interface BodyLimits {
  maxBytes: number;
  /** Aborted when the body took longer than the receiver's `bodyTimeoutMs`: stop reading. */
  signal: AbortSignal;
}

/**
 * A body read on demand, so that the receiver looks at the method and the signature headers
 * before any byte of the body is read. Rejects with a {@link BodyReadError}.
 */
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

/**
 * The limits one body is read under. jobhook's own readers learn of a time-out through
 * {@link onBodyAbort} rather than through `signal`: creating an AbortSignal and listening on it
 * costs several µs per delivery on Node 20, more than reading a 1 KB body, so `signal` is made
 * only when a reader reads it. A class, not an object literal with a getter: V8 builds such a
 * literal slowly, and this object is made for every delivery.
 */
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

/** Calls `stop` once the receiver gives up on the body; returns the function that stops listening. */
export function onBodyAbort(limits: BodyLimits, stop: () => void): () => void {
  if (limits instanceof BodyReading) return BodyReading.onAbort(limits, stop);
  const { signal } = limits;
  signal.addEventListener('abort', stop, { once: true });
  return () => signal.removeEventListener('abort', stop);
}

function ignore(): void {}
