import type { IncomingHttpHeaders, IncomingMessage, ServerResponse } from 'node:http';
import { answers, type ReceiverResponse } from '../src/wire/answers.js';
import type { BodyInput } from '../src/wire/body.js';
import { collectNodeStream, declaredLength } from '../src/wire/collect-stream.js';
import { closing, DISCARD_BYTES, DISCARD_MS } from '../src/wire/unread-body.js';
import type { BodyLimits, BodyReader } from '../src/wire/read-body.js';
import type { DeliveryInput, Receiver } from '../src/receiver/types.js';

/** What the Node-stream adapters need of a receiver (any event map has these). */
export type NodeReceiver = Pick<Receiver, 'receive' | 'maxBodyBytes'>;

/**
 * Answers one Node request: the single implementation behind the Express, Koa and Node adapters
 * (Fastify uses {@link readNodeBody} alone).
 * `body` is a raw copy a framework already holds (`req.rawBody`, `express.raw()`); without one,
 * the receiver reads the stream (within its limits) once the method and headers passed. An answer
 * given before the body was read to its end waits until the rest is discarded or the connection
 * is to be closed ({@link afterUnreadBody}). Never rejects.
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
    (result) => answerWhenBodyDone(req, res, result),
    () => answerWhenBodyDone(req, res, answers.internal()),
  );
}

/** Writes `result` at once when the body was read to its end, else after {@link afterUnreadBody}. */
function answerWhenBodyDone(req: IncomingMessage, res: ServerResponse, result: ReceiverResponse) {
  if (bodyDone(req)) return writeAnswer(res, result);
  return afterUnreadBody(req, result).then((answer) => writeAnswer(res, answer));
}

/** Whether nothing of the request's body is left to deal with before answering (see {@link afterUnreadBody}). */
export function bodyDone(req: IncomingMessage): boolean {
  return req.complete || req.httpVersionMajor !== 1;
}

/**
 * The answer to give once a request whose body was not read to its end is dealt with (see
 * src/wire/unread-body.ts): the rest of the body is read and dropped first, up to DISCARD_BYTES
 * and DISCARD_MS; once it has ended, `answer` is given as it is and the connection carries the
 * next request; larger, slower or cut off, `answer` closes the connection. A body that timed out
 * (408, which closes the connection) is not waited for. HTTP/1 only (see {@link bodyDone}).
 */
export async function afterUnreadBody(
  req: IncomingMessage,
  answer: ReceiverResponse,
): Promise<ReceiverResponse> {
  return answer.status !== 408 && (await discardRest(req)) ? answer : closing(answer);
}

/** Reads and drops the rest of `req`'s body, within the bounds above: true once it has ended. */
function discardRest(req: IncomingMessage): Promise<boolean> {
  if (req.destroyed || declaredLength(req.headers['content-length']) > DISCARD_BYTES) {
    return Promise.resolve(false);
  }
  return new Promise((resolve) => {
    let left = DISCARD_BYTES;
    const done = (ended: boolean) => {
      clearTimeout(timer);
      req.removeListener('data', onData);
      req.removeListener('end', onEnd);
      req.removeListener('close', onCut);
      req.removeListener('error', onCut);
      // Too much or too slow: nothing more is read; the answer closes the connection.
      if (!ended) req.pause();
      resolve(ended);
    };
    const onData = (chunk: Buffer) => {
      left -= chunk.byteLength;
      if (left < 0) done(false);
    };
    const onEnd = () => done(true);
    const onCut = () => done(false);
    const timer = setTimeout(onCut, DISCARD_MS);
    req.on('data', onData);
    req.on('end', onEnd);
    req.on('close', onCut);
    req.on('error', onCut);
    req.resume();
  });
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
 * Reads a Node request's body with the Node collector ({@link collectNodeStream}): a declared
 * `Content-Length` over the limit is refused before anything is read, a streamed body as soon as it
 * passes the limit, so memory stays bounded by the limit either way, and the rest is left unread
 * for the answer to deal with ({@link afterUnreadBody}). Rejects with a `BodyReadError`.
 * Node has already refused a malformed `Content-Length`.
 *
 * Written here rather than with raw-body, which it replaced: on every delivery raw-body added and
 * then removed five listeners and copied even a single-chunk body (bench/NOTES.md).
 */
export function readNodeBody(req: IncomingMessage, limits: BodyLimits): Promise<Uint8Array> {
  return collectNodeStream(req, limits, declaredLength(req.headers['content-length']));
}
