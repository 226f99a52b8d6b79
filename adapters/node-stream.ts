import type { IncomingHttpHeaders, IncomingMessage, ServerResponse } from 'node:http';
import { answers, type ReceiverResponse } from '../src/wire/answers.js';
import type { BodyInput } from '../src/wire/body.js';
import {
  BodyCollector,
  BodyReadError,
  onBodyAbort,
  type BodyLimits,
  type BodyReader,
} from '../src/wire/read-body.js';
import type { DeliveryInput, Receiver } from '../src/receiver/types.js';

/** What the Node-stream adapters need of a receiver (any event map has these). */
export type NodeReceiver = Pick<Receiver, 'receive' | 'maxBodyBytes'>;

/**
 * Answers one Node request: the single implementation behind the Express, Koa and Node adapters
 * (Fastify uses {@link readNodeBody} alone).
 * `body` is a raw copy a framework already holds (`req.rawBody`, `express.raw()`); without one,
 * the receiver reads the stream (within its limits) once the method and headers passed. Never
 * rejects.
 */
export function answerNodeRequest(
  receiver: NodeReceiver,
  req: IncomingMessage,
  res: ServerResponse,
  body?: BodyInput,
): Promise<void> {
  let answer: Promise<ReceiverResponse>;
  try {
    answer = receiveNodeRequest(receiver, req, body);
  } catch {
    answer = Promise.resolve(answers.internal());
  }
  // `receive` promises never to reject; a receiver-like object that does must not crash the process.
  return answer.then(
    (result) => writeAnswer(res, result),
    () => writeAnswer(res, answers.internal()),
  );
}

/**
 * Copies the receiver's answer onto the response, as one flat list of names and values given to
 * `writeHead`: about 0.4 µs less per answer than a `setHeader` per header, which files each one in
 * the response's own table first, and than an object spread into `writeHead` (bench/NOTES.md).
 * Headers a middleware set before are kept; ours replace those of the same name, as `setHeader`
 * did (`writeHead` removes them before adding a list's).
 */
function writeAnswer(res: ServerResponse, result: ReceiverResponse): void {
  // The client may have gone (an aborted upload) or another middleware may have answered.
  if (res.headersSent || res.destroyed) return;
  const { headers, body } = result;
  const list: (string | number)[] = [];
  for (const name of Object.keys(headers)) list.push(name, headers[name]!);
  list.push('content-length', Buffer.byteLength(body));
  res.writeHead(result.status, list).end(body);
}

/**
 * The receiver's answer to one Node request, not yet written: `given` as in
 * {@link answerNodeRequest}. The Hono adapter uses it alone on @hono/node-server, where Hono
 * writes the answer.
 */
export function receiveNodeRequest(
  receiver: Pick<Receiver, 'receive'>,
  req: IncomingMessage,
  given: BodyInput | undefined,
): Promise<ReceiverResponse> {
  if (given !== undefined) return receiver.receive(new NodeDeliveryInput(req, given));
  // A body parser that ran first ended the stream and kept no raw copy: `undefined` makes the core
  // answer 500 with the fix, where reading would fail or wait for data that never comes.
  if (!req.readable) return receiver.receive(new NodeDeliveryInput(req, undefined));
  // Read only if the receiver asks: not for other methods, nor for refused signature headers
  // (Node discards what was sent).
  return receiver.receive(new NodeDeliveryInput(req, (limits) => readNodeBody(req, limits)));
}

/**
 * A Node request as the core's input. Its `url` is made when it is read, and only a `secret`
 * function reads it: a receiver with a fixed secret (most of them) never pays for the pattern
 * test of Host and the string it costs (bench/NOTES.md). A class, so the getter is on its
 * prototype rather than made per request.
 */
export class NodeDeliveryInput implements DeliveryInput {
  readonly method: string;
  readonly headers: IncomingHttpHeaders;
  readonly #req: IncomingMessage;

  /** `headers`: a framework's view of them when it has its own (Fastify's `request.headers`). */
  constructor(
    req: IncomingMessage,
    readonly body: BodyInput | BodyReader | undefined,
    headers: IncomingHttpHeaders = req.headers,
  ) {
    this.method = req.method ?? 'POST';
    this.headers = headers;
    this.#req = req;
  }

  /** The request's absolute URL ({@link requestUrl}), made on each read. */
  get url(): string {
    return requestUrl(this.#req);
  }
}

/**
 * The request's absolute URL, for a `secret` function: the full path (`originalUrl` under an
 * Express or Connect mount point) on the Host the client named. A Host that is not a plain host
 * name is replaced by `localhost`, so that `new URL(url)` never throws in the user's function.
 */
export function requestUrl(req: IncomingMessage & { originalUrl?: unknown }): string {
  const path = typeof req.originalUrl === 'string' ? req.originalUrl : (req.url ?? '/');
  const host = req.headers.host;
  const scheme = (req.socket as { encrypted?: boolean } | null)?.encrypted === true ? 'https' : 'http';
  return `${scheme}://${host !== undefined && PLAIN_HOST.test(host) ? host : 'localhost'}${path.startsWith('/') ? path : '/'}`;
}

const PLAIN_HOST = /^[A-Za-z0-9.-]+(:[0-9]{1,5})?$|^\[[0-9A-Fa-f:.]+\](:[0-9]{1,5})?$/;

/**
 * Reads a Node request's body, refusing a declared `Content-Length` over the limit before reading
 * anything and stopping as soon as a streamed body passes it, so memory stays bounded by the limit
 * either way. After a refusal Node discards the rest of the request, which lets the client read the
 * answer. Rejects with a {@link BodyReadError}: `too_large`, or `unreadable` for a body that never
 * fully arrived (an aborted upload, a stream error, fewer bytes than declared, a stream already
 * read or decoded to text). The chunks are copied into one buffer as they come (see
 * {@link BodyCollector}): a body sent in tiny chunks holds no more than one sent in large ones.
 *
 * Written here rather than with raw-body, which it replaced: on every delivery raw-body added and
 * then removed five listeners and copied even a single-chunk body (bench/NOTES.md). This reader adds four and removes none on success:
 * the request is done with, and a later `error` must still find a listener.
 */
export function readNodeBody(req: IncomingMessage, limits: BodyLimits): Promise<Uint8Array> {
  const { maxBytes } = limits;
  const declared = declaredLength(req.headers['content-length']);
  if (declared > maxBytes) return Promise.reject(new BodyReadError('too_large'));
  if (!req.readable || req.readableEncoding !== null) return Promise.reject(new BodyReadError('unreadable'));
  return new Promise((resolve, reject) => {
    const body = new BodyCollector(maxBytes);
    let settled = false;
    const fail = (reason: 'too_large' | 'unreadable', cause?: unknown) => {
      if (settled) return;
      settled = true;
      stopListening();
      // Stop taking data; Node discards the rest once the answer is written.
      req.removeListener('data', onData);
      req.pause();
      reject(new BodyReadError(reason, { cause }));
    };
    const onData = (chunk: Buffer) => {
      if (settled) return;
      if (!body.add(chunk)) fail('too_large');
    };
    // Past the receiver's time-out, stop taking data: the answer closes the connection.
    const stopListening = onBodyAbort(limits, () => fail('unreadable'));
    req.on('data', onData);
    req.on('end', () => {
      if (settled) return;
      if (declared >= 0 && body.length !== declared) return fail('unreadable');
      settled = true;
      stopListening();
      resolve(body.bytes());
    });
    req.on('error', (error) => fail('unreadable', error));
    // Closed before its end: the upload was cut off.
    req.on('close', () => fail('unreadable'));
  });
}

/** The declared body length, or -1 when none is declared. Node has already refused malformed ones. */
function declaredLength(header: string | undefined): number {
  if (header === undefined) return -1;
  const length = Number(header);
  return Number.isSafeInteger(length) && length >= 0 ? length : -1;
}
