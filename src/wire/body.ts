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
 * jobhook's own readers learn of a time-out through this hook on the limits object rather than
 * through `signal`: creating an AbortSignal and listening on it costs several µs per delivery on
 * Node 20, more than reading a 1 KB body. `signal` stays there, made on first use, for any other
 * reader.
 */
const ON_ABORT: unique symbol = Symbol('jobhook.onBodyAbort');

interface HookedLimits extends BodyLimits {
  [ON_ABORT]?: (stop: () => void) => () => void;
}

/** Calls `stop` once the receiver gives up on the body; returns the function that stops listening. */
export function onBodyAbort(limits: BodyLimits, stop: () => void): () => void {
  const hook = (limits as HookedLimits)[ON_ABORT];
  if (hook) return hook(stop);
  const { signal } = limits;
  signal.addEventListener('abort', stop, { once: true });
  return () => signal.removeEventListener('abort', stop);
}

/** The limits one body is read under, and `abort()` for when its time is up. */
export function bodyLimits(maxBytes: number): { limits: BodyLimits; abort: () => void } {
  let controller: AbortController | undefined;
  let aborted = false;
  let stops: (() => void)[] | undefined;
  const limits: HookedLimits = {
    maxBytes,
    get signal() {
      if (!controller) {
        controller = new AbortController();
        if (aborted) controller.abort();
      }
      return controller.signal;
    },
    [ON_ABORT](stop) {
      if (aborted) {
        stop();
        return ignore;
      }
      (stops ??= []).push(stop);
      return () => {
        const at = stops?.indexOf(stop) ?? -1;
        if (at >= 0) stops!.splice(at, 1);
      };
    },
  };
  return {
    limits,
    abort: () => {
      if (aborted) return;
      aborted = true;
      controller?.abort();
      for (const stop of stops?.splice(0) ?? []) stop();
    },
  };
}

function ignore(): void {}
