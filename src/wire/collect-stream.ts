import { ignore } from '../common/logging.js';
import { BodyReadError, onBodyAbort, type BodyLimits, type CollectLimits } from './body.js';

// The two capped collectors (Node and Web streams) every body jobhook reads goes through.

/** Limits of `maxBytes` and `timeoutMs`, for readers outside the receiver (which has its own deadlines). */
export function limitsWithin(maxBytes: number, timeoutMs: number): BodyLimits {
  return { maxBytes, signal: AbortSignal.timeout(timeoutMs) };
}

/** A declared body length (`Content-Length`), or -1 when none is declared or it is not a length. */
export function declaredLength(header: string | null | undefined): number {
  if (header === undefined || header === null) return -1;
  const length = Number(header);
  return Number.isSafeInteger(length) && length >= 0 ? length : -1;
}

/** What the Node collector uses of a stream (a Node `Readable` has it), typed here: this layer runs anywhere. */
export interface NodeByteStream {
  readonly readable: boolean;
  readonly readableEncoding: string | null;
  on(event: 'data', listener: (chunk: Uint8Array) => void): unknown;
  on(event: 'end' | 'close', listener: () => void): unknown;
  on(event: 'error', listener: (error: unknown) => void): unknown;
  removeListener(event: 'data', listener: (chunk: Uint8Array) => void): unknown;
  pause(): unknown;
}

/** A Node request's body within `limits` (see {@link limitsWithin}), for servers outside the receiver. */
export function readRequestBody(
  request: NodeByteStream & { readonly headers: { readonly 'content-length'?: string | undefined } },
  limits: BodyLimits,
): Promise<Uint8Array> {
  return collectNodeStream(request, limits, declaredLength(request.headers['content-length']));
}

/** Collects a Node stream's bytes within `limits`; a refusal pauses it, the rest unread (its listeners stay). */
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
    stream.on('close', () => fail('unreadable'));
  });
}

/** Collects a Web stream's bytes within `limits`; over the limit, the stream is left unlocked, the rest unread. */
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
          reader.releaseLock();
          throw new BodyReadError('too_large');
        }
      }
      if (cancelled) throw new BodyReadError('unreadable');
      return body.bytes();
    } finally {
      stopListening();
    }
  } catch (error) {
    throw error instanceof BodyReadError ? error : new BodyReadError('unreadable', { cause: error });
  }
}

const EMPTY = new Uint8Array(0);
const FIRST_CAPACITY = 16 * 1024;

/** A body's chunks copied into one doubling buffer, so that no chunk keeps a larger read buffer alive. */
export class BodyCollector {
  #first: Uint8Array | undefined = undefined;
  #buffer: Uint8Array | undefined = undefined;
  #length = 0;

  constructor(readonly maxBytes: number) {}

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

  bytes(): Uint8Array {
    return this.#first ?? this.#buffer?.subarray(0, this.#length) ?? EMPTY;
  }
}

/**
 * An answer's body as text, up to `maxBytes` (its sender decides how much it sends): past it the
 * rest is cancelled and the result is undefined. Adds the bytes read to `counted`.
 */
export async function readBodyCapped(
  response: Response,
  maxBytes: number,
  counted?: { bytes: number },
): Promise<string | undefined> {
  const { body } = response;
  let bytes: Uint8Array;
  try {
    bytes = await collectWebStream(
      body,
      { maxBytes },
      declaredLength(response.headers.get('content-length')),
    );
  } catch (error) {
    if (!(error instanceof BodyReadError)) throw error;
    // eslint-disable-next-line @typescript-eslint/only-throw-error
    if (error.reason === 'unreadable') throw error.cause ?? error;
    await body?.cancel().catch(ignore);
    return undefined;
  }
  if (counted) counted.bytes += bytes.byteLength;
  return new TextDecoder().decode(bytes);
}
