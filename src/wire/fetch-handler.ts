import type { ReceiverResponse } from './answers.js';
import { collectWebStream, declaredLength } from './collect-stream.js';
import { BodyReadError, type BodyLimits, type BodyReader } from './read-body.js';
import type { HeadersInput } from './headers.js';
import { closing, discardWebBody } from './unread-body.js';

type Receive = (input: {
  method?: string;
  headers: HeadersInput;
  url?: string;
  body: BodyReader;
}) => Promise<ReceiverResponse>;

const DECIMAL = /^\d+$/;

/**
 * The Web-standard `(Request) => Response` handler over `receive`. The body is handed over as a
 * reader: the receiver reads it only once the method and the signature headers passed.
 */
export function createFetchHandler(receive: Receive) {
  // Not an `async` function: its promise would wrap `receive`'s, a few more turns of the
  // microtask queue on every request for nothing.
  return (request: Request): Promise<Response> => {
    const input = new FetchDeliveryInput(request);
    let answered: Promise<ReceiverResponse>;
    try {
      answered = receive(input);
    } catch (error) {
      // Rejects with what was thrown, as the `async` function this replaced did.
      // eslint-disable-next-line @typescript-eslint/prefer-promise-reject-errors
      return Promise.reject(error);
    }
    return answered.then((result) => input.respond(result));
  };
}

/** The receiver's answer as a Web `Response`. */
export function toResponse(result: ReceiverResponse): Response {
  return new Response(result.body, { status: result.status, headers: result.headers });
}

/**
 * A `Request` as the core's input. Its `url` is read from the request only when the core reads it
 * (only a `secret` function does): undici's `Request#url` serialises the URL on every read.
 */
class FetchDeliveryInput {
  readonly method: string;
  readonly headers: Headers;
  readonly body: BodyReader;
  readonly #request: Request;
  /** Whether the receiver asked for the body. */
  #read = false;

  constructor(request: Request) {
    this.method = request.method;
    this.headers = request.headers;
    this.body = (limits) => {
      this.#read = true;
      return readFetchBody(request, limits);
    };
    this.#request = request;
  }

  get url(): string {
    return this.#request.url;
  }

  /**
   * The receiver's answer as a `Response`, once a body it left unread is dealt with
   * (unread-body.ts): one it never asked for, or read only to refuse it as too large. A body read to
   * its end, or cut off by the time-out (a 408 closes the connection), is done with.
   */
  respond(result: ReceiverResponse): Response | Promise<Response> {
    if (this.#read && result.status !== 413) return toResponse(result);
    let body: ReadableStream<Uint8Array> | null;
    try {
      body = this.#request.body;
    } catch {
      body = null;
    }
    if (body === null || body.locked) return toResponse(result);
    const declared = declaredLength(this.#request.headers.get('content-length'));
    return discardWebBody(body, declared).then((ended) => toResponse(ended ? result : closing(result)));
  }
}

/**
 * Reads a `Request`'s body within `maxBytes`: a declared length over it is refused before reading,
 * a streamed body as soon as it passes it. Rejects with a {@link BodyReadError}.
 */
function readFetchBody(request: Request, limits: BodyLimits): Promise<Uint8Array> {
  const { maxBytes } = limits;
  const length = request.headers.get('content-length');
  if (Number(length) > maxBytes) return Promise.reject(new BodyReadError('too_large'));
  // A chunked body is streamed and counted (readLimited).
  if (length === null || !DECIMAL.test(length)) return readLimited(request, limits);
  // A declared length within the limit bounds what the server lets through, so the body is read
  // in one call (servers such as @hono/node-server read it straight from the socket, where
  // `request.body` would build a web stream). One `.then`, not an `async` function awaiting it:
  // a promise and a turn of the microtask queue less per delivery (bench/NOTES.md).
  let read: Promise<ArrayBuffer>;
  try {
    read = request.arrayBuffer();
  } catch (error) {
    return Promise.reject(unreadable(error));
  }
  return read.then(
    (buffer) => {
      if (buffer.byteLength > maxBytes) throw new BodyReadError('too_large');
      return new Uint8Array(buffer);
    },
    (error: unknown) => {
      throw unreadable(error);
    },
  );
}

/** What a failed read rejects with: a {@link BodyReadError} as it is, anything else as `unreadable`. */
function unreadable(error: unknown): BodyReadError {
  return error instanceof BodyReadError ? error : new BodyReadError('unreadable', { cause: error });
}

/**
 * Reads a request's body stream with the Web collector ({@link collectWebStream}): to its end, or
 * until it passes the limit or the receiver gives up (the stream is then cancelled). Whatever
 * fails, `request.body` included, rejects with a {@link BodyReadError}.
 */
function readLimited(request: Request, limits: BodyLimits): Promise<Uint8Array> {
  let stream: ReadableStream<Uint8Array> | null;
  try {
    stream = request.body;
  } catch (error) {
    return Promise.reject(unreadable(error));
  }
  return collectWebStream(stream, limits);
}
