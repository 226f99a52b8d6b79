import { answers, type ReceiverResponse } from './answers.js';
import { rawBytes, type BodyInput } from './body.js';
import { ExpiryList, type ExpiryLinks } from '../common/structures.js';
import { ignore } from '../common/logging.js';

/**
 * Reading a body within its limit and its deadline, in one place: the receiver's side
 * ({@link readBodyWithin}), and what a reader is given ({@link BodyLimits}) and may use
 * ({@link BodyCollector}, {@link onBodyAbort}; the two collectors built on them are in
 * collect-stream.ts). Adapters supply a reader and nothing else.
 */

/** A body collector's limits (collect-stream.ts): at most `maxBytes`, and to stop once `signal` (if any) aborts. */
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

/** A body read, its answer when it failed: what {@link readBodyWithin} resolves with. */
export type ReadBody = (reader: BodyReader) => Promise<Uint8Array | ReceiverResponse>;

/**
 * The receiver's body reads: each runs `reader` within `maxBytes` (413) and `timeoutMs` (408, on
 * the monotonic clock: a step of the wall clock neither hastens nor delays it; 0 or Infinity for
 * none) and resolves with the bytes or the answer, never rejecting. Settled by hand rather than
 * with Promise.race, with no AbortSignal unless the reader asks for one and no timer of its own
 * (see {@link bodyDeadlines}): each cost more per delivery than reading a small body.
 */
export function readBodyWithin(maxBytes: number, timeoutMs: number): ReadBody {
  const deadlines = timeoutMs > 0 && Number.isFinite(timeoutMs) ? bodyDeadlines(timeoutMs) : undefined;
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
      const deadline = deadlines?.start(() => {
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

/**
 * The limits one body is read under. jobhook's own readers learn of a time-out through
 * {@link onBodyAbort} rather than through `signal`, which is made only when a reader reads it
 * (an AbortSignal and its listener cost more per delivery than reading a small body). A class,
 * not an object literal with a getter, which V8 builds slowly: one is made for every delivery.
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

/**
 * Calls `stop` once the reader must give up on the body (the receiver's time is up, or `signal`
 * aborted), at once if it already must; returns the function that stops listening.
 */
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

const EMPTY = new Uint8Array(0);
/** The first buffer made for a body that came in more than one chunk. */
const FIRST_CAPACITY = 16 * 1024;

/**
 * A body's chunks, copied into one buffer that doubles as it fills (never past `maxBytes`), so
 * that what a body holds is at most about twice its length whatever the size of its chunks: a
 * chunk is often a view of a larger read buffer, and keeping a million 1-byte views kept their
 * buffers alive too (about 150 times the body). A body that comes in one chunk is kept as it is.
 */
export class BodyCollector {
  #first: Uint8Array | undefined = undefined;
  #buffer: Uint8Array | undefined = undefined;
  #length = 0;

  constructor(readonly maxBytes: number) {}

  /** Bytes collected so far. */
  get length(): number {
    return this.#length;
  }

  /** Adds a chunk; `false` (the chunk not kept) once the body would pass `maxBytes`. */
  add(chunk: Uint8Array): boolean {
    const length = this.#length + chunk.byteLength;
    if (length > this.maxBytes) return false;
    if (this.#length === 0 && this.#buffer === undefined) {
      this.#first = chunk;
      this.#length = length;
      return true;
    }
    let buffer = this.#buffer;
    if (buffer === undefined || buffer.byteLength < length) {
      const grown = new Uint8Array(Math.min(this.maxBytes, Math.max(2 * length, FIRST_CAPACITY)));
      grown.set(buffer ? buffer.subarray(0, this.#length) : this.#first!);
      this.#first = undefined;
      buffer = this.#buffer = grown;
    }
    buffer.set(chunk, this.#length);
    this.#length = length;
    return true;
  }

  /** The body so far, as one view. */
  bytes(): Uint8Array {
    return this.#first ?? this.#buffer?.subarray(0, this.#length) ?? EMPTY;
  }
}

/** A body's place in its receiver's time-out queue. */
export interface BodyDeadline {
  /** The body arrived (or failed) in time: it no longer expires. Idempotent. */
  cancel(): void;
}

interface Entry extends BodyDeadline, ExpiryLinks<Entry> {
  expire: () => void;
}

/**
 * The body time-outs of one receiver, on one timer and the monotonic clock (`performance.now()`),
 * so that a step of the wall clock (NTP, a VM resumed) neither disables nor fires them. Every body
 * a receiver reads gets the same time, so deadlines come due in the order the reads started: a
 * queue linked through its entries, due first at its head, and one setTimeout armed for the head
 * (a setTimeout per body cost more than the rest of reading a small body: bench/NOTES.md).
 *
 * The timer is left armed when the queue empties (a small body is usually read within the turn
 * its request arrived, so arming and clearing per request would cost what it saves): it fires at
 * most once per time-out with nothing due, and then stops. It is unref'd, so it never keeps a
 * process alive by itself; a server's open connections do that while bodies are being read.
 */
export function bodyDeadlines(timeoutMs: number) {
  // In start order, which is due order: every body gets the same time (an ExpiryList).
  const queue = new ExpiryList<Entry>();
  let timer: ReturnType<typeof setTimeout> | undefined;

  function arm(head: Entry) {
    // At least 1 ms: a clock that has not moved yet (Workers advance it only between events)
    // must not spin the timer.
    timer = setTimeout(fire, Math.max(1, head.expiresAt - performance.now()));
    // A number on Workers and in browsers, where there is nothing to unref.
    (timer as { unref?: () => void }).unref?.();
  }

  function fire() {
    timer = undefined;
    const now = performance.now();
    for (let due = queue.shift(now); due; due = queue.shift(now)) due.expire();
    if (queue.oldest && timer === undefined) arm(queue.oldest);
  }

  function cancel(this: Entry) {
    if (this.list) this.list.remove(this);
  }

  return {
    /** Calls `expire` once `timeoutMs` have passed, unless the returned deadline is cancelled first. */
    start(expire: () => void): BodyDeadline {
      const entry: Entry = {
        expire,
        cancel,
        expiresAt: 0,
        list: undefined,
        older: undefined,
        newer: undefined,
      };
      queue.push(entry, performance.now() + timeoutMs);
      if (timer === undefined) arm(entry);
      return entry;
    },
  };
}
