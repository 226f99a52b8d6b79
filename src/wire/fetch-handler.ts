import type { ReceiverResponse } from './answers.js';
import { BodyCollector, BodyReadError, onBodyAbort, type BodyLimits, type BodyReader } from './read-body.js';
import type { HeadersInput } from './headers.js';

type Receive = (input: {
  method?: string;
  headers: HeadersInput;
  url?: string;
  body: BodyReader;
}) => Promise<ReceiverResponse>;

const EMPTY = new Uint8Array(0);
const DECIMAL = /^\d+$/;

/**
 * The Web-standard `(Request) => Response` handler over `receive`. The body is handed over as a
 * reader: the receiver reads it only once the method and the signature headers passed.
 */
export function createFetchHandler(receive: Receive) {
  // Not an `async` function: its promise would wrap `receive`'s, a few more turns of the
  // microtask queue on every request for nothing.
  return (request: Request): Promise<Response> => {
    let answered: Promise<ReceiverResponse>;
    try {
      answered = receive(new FetchDeliveryInput(request));
    } catch (error) {
      // Rejects with what was thrown, as the `async` function this replaced did.
      // eslint-disable-next-line @typescript-eslint/prefer-promise-reject-errors
      return Promise.reject(error);
    }
    return answered.then(toResponse);
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

  constructor(request: Request) {
    this.method = request.method;
    this.headers = request.headers;
    this.body = (limits) => readFetchBody(request, limits);
    this.#request = request;
  }

  get url(): string {
    return this.#request.url;
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
 * Reads a request's body stream to its end, or stops (and cancels it) once it passes the limit or
 * the receiver gives up. The chunks are copied into one buffer as they come (see
 * {@link BodyCollector}). Whatever fails, `request.body` included, rejects (see {@link unreadable}).
 */
async function readLimited(request: Request, limits: BodyLimits): Promise<Uint8Array> {
  try {
    const stream = request.body;
    if (stream === null) return EMPTY;
    const reader = stream.getReader();
    const cancel = () => void reader.cancel().catch(() => undefined);
    const stopListening = onBodyAbort(limits, cancel);
    try {
      const body = new BodyCollector(limits.maxBytes);
      for (;;) {
        const { done, value } = await reader.read();
        if (done) break;
        if (!body.add(value)) {
          cancel();
          throw new BodyReadError('too_large');
        }
      }
      return body.bytes();
    } finally {
      stopListening();
    }
  } catch (error) {
    throw unreadable(error);
  }
}
