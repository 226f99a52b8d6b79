import type { ReceiverResponse } from './answers.js';
import { collectWebStream, declaredLength } from './collect-stream.js';
import { BodyReadError, type BodyLimits, type BodyReader } from './body.js';
import type { HeadersInput } from './headers.js';
import { closing, discardWebBody } from './unread-body.js';

type Receive = (input: {
  method?: string;
  headers: HeadersInput;
  url?: string;
  body: BodyReader;
}) => Promise<ReceiverResponse>;

const DECIMAL = /^\d+$/;

/** The Web-standard `(Request) => Response` handler over `receive`, handing the body over as a reader. */
export function createFetchHandler(receive: Receive) {
  // Not `async`: its promise would wrap `receive`'s for nothing.
  return (request: Request): Promise<Response> => {
    const input = new FetchDeliveryInput(request);
    let answered: Promise<ReceiverResponse>;
    try {
      answered = receive(input);
    } catch (error) {
      // eslint-disable-next-line @typescript-eslint/prefer-promise-reject-errors -- as an async function would
      return Promise.reject(error);
    }
    return answered.then((result) => input.respond(result));
  };
}

/** The receiver's answer as a Web `Response`. */
export function toResponse(result: ReceiverResponse): Response {
  return new Response(result.body, { status: result.status, headers: result.headers });
}

/** A `Request` as the core's input; `url` is read only when a `secret` function asks (undici serialises it). */
class FetchDeliveryInput {
  readonly method: string;
  readonly headers: Headers;
  readonly body: BodyReader;
  readonly #request: Request;
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

  /** The answer as a `Response`, once a body left unread (never asked for, or refused 413) is dealt with. */
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

function readFetchBody(request: Request, limits: BodyLimits): Promise<Uint8Array> {
  const { maxBytes } = limits;
  const length = request.headers.get('content-length');
  if (Number(length) > maxBytes) return Promise.reject(new BodyReadError('too_large'));
  if (length === null || !DECIMAL.test(length)) return readLimited(request, limits);
  // A declared length bounds what the server lets through, so it is read in one call.
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

function unreadable(error: unknown): BodyReadError {
  return error instanceof BodyReadError ? error : new BodyReadError('unreadable', { cause: error });
}

function readLimited(request: Request, limits: BodyLimits): Promise<Uint8Array> {
  let stream: ReadableStream<Uint8Array> | null;
  try {
    stream = request.body;
  } catch (error) {
    return Promise.reject(unreadable(error));
  }
  return collectWebStream(stream, limits);
}
