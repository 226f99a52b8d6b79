import type { IncomingHttpHeaders, IncomingMessage, ServerResponse } from 'node:http';
import { answers, type ReceiverResponse } from '../src/wire/answers.js';
import { deadline } from '../src/common/deadline.js';
import type { BodyInput, BodyLimits, BodyReader } from '../src/wire/body.js';
import { collectNodeStream, declaredLength } from '../src/wire/collect-stream.js';
import { closing, DISCARD_BYTES, DISCARD_MS } from '../src/wire/unread-body.js';
import type { DeliveryFramework, DeliveryInput, Receiver } from '../src/receiver/types.js';

/** What the Node-stream adapters need of a receiver (any event map has these). */
export type NodeReceiver = Pick<Receiver, 'receive' | 'maxBodyBytes'>;

/** Answers one Node request (Express, Koa, Node); `body`: a raw copy a framework holds. Never rejects. */
export function answerNodeRequest(
  receiver: NodeReceiver,
  framework: DeliveryFramework,
  req: IncomingMessage,
  res: ServerResponse,
  body?: BodyInput,
): Promise<void> {
  let answer: Promise<ReceiverResponse>;
  try {
    answer = receiveNodeRequest(receiver, framework, req, body);
  } catch {
    answer = Promise.resolve(answers.internal());
  }
  // A receiver-like object whose `receive` rejects must not crash the process.
  return answer.then(
    (result) => answerWhenBodyDone(req, res, result),
    () => answerWhenBodyDone(req, res, answers.internal()),
  );
}

function answerWhenBodyDone(req: IncomingMessage, res: ServerResponse, result: ReceiverResponse) {
  if (bodyDone(req)) return writeAnswer(res, result);
  return afterUnreadBody(req, result).then((answer) => writeAnswer(res, answer));
}

/** Whether nothing of the request's body is left to deal with before answering. */
export function bodyDone(req: IncomingMessage): boolean {
  return req.complete || req.httpVersionMajor !== 1;
}

/** `answer` once the rest of an unread body was dropped (src/wire/unread-body.ts), or closing the connection. */
export async function afterUnreadBody(
  req: IncomingMessage,
  answer: ReceiverResponse,
): Promise<ReceiverResponse> {
  return answer.status !== 408 && (await discardRest(req)) ? answer : closing(answer);
}

function discardRest(req: IncomingMessage): Promise<boolean> {
  if (req.destroyed || declaredLength(req.headers['content-length']) > DISCARD_BYTES) {
    return Promise.resolve(false);
  }
  return new Promise((resolve) => {
    let left = DISCARD_BYTES;
    const done = (ended: boolean) => {
      due.cancel();
      req.removeListener('data', onData);
      req.removeListener('end', onEnd);
      req.removeListener('close', onCut);
      req.removeListener('error', onCut);
      if (!ended) req.pause();
      resolve(ended);
    };
    const onData = (chunk: Buffer) => {
      left -= chunk.byteLength;
      if (left < 0) done(false);
    };
    const onEnd = () => done(true);
    const onCut = () => done(false);
    const due = deadline(DISCARD_MS, onCut);
    req.on('data', onData);
    req.on('end', onEnd);
    req.on('close', onCut);
    req.on('error', onCut);
    req.resume();
  });
}

/** Writes the answer with one `writeHead` of a flat header list; ours replace a middleware's of the same name. */
function writeAnswer(res: ServerResponse, result: ReceiverResponse): void {
  if (res.headersSent || res.destroyed) return;
  const { headers, body } = result;
  const list: (string | number)[] = [];
  for (const name of Object.keys(headers)) list.push(name, headers[name]!);
  list.push('content-length', Buffer.byteLength(body));
  res.writeHead(result.status, list).end(body);
}

/** The receiver's answer to one Node request, not yet written (Hono writes it on @hono/node-server). */
export function receiveNodeRequest(
  receiver: Pick<Receiver, 'receive'>,
  framework: DeliveryFramework,
  req: IncomingMessage,
  given: BodyInput | undefined,
): Promise<ReceiverResponse> {
  if (given !== undefined) return receiver.receive(new NodeDeliveryInput(req, given, framework));
  // A body parser ran first and kept no raw copy: the core answers 500 and logs the framework's fix.
  if (!req.readable) return receiver.receive(new NodeDeliveryInput(req, undefined, framework));
  return receiver.receive(new NodeDeliveryInput(req, (limits) => readNodeBody(req, limits), framework));
}

/** A Node request as the core's input; `url` is made only when a `secret` function reads it. */
export class NodeDeliveryInput implements DeliveryInput {
  readonly method: string;
  readonly headers: IncomingHttpHeaders;
  readonly #req: IncomingMessage;

  /** `headers`: a framework's view of them when it has its own (Fastify's `request.headers`). */
  constructor(
    req: IncomingMessage,
    readonly body: BodyInput | BodyReader | undefined,
    readonly framework: DeliveryFramework,
    headers: IncomingHttpHeaders = req.headers,
  ) {
    this.method = req.method ?? 'POST';
    this.headers = headers;
    this.#req = req;
  }

  /** The request's absolute URL ({@link requestUrl}). */
  get url(): string {
    return requestUrl(this.#req);
  }
}

/** The request's absolute URL, for a `secret` function; a Host that is no plain host name becomes `localhost`. */
export function requestUrl(req: IncomingMessage & { originalUrl?: unknown }): string {
  const path = typeof req.originalUrl === 'string' ? req.originalUrl : (req.url ?? '/');
  const host = req.headers.host;
  const scheme = (req.socket as { encrypted?: boolean } | null)?.encrypted === true ? 'https' : 'http';
  return `${scheme}://${host !== undefined && PLAIN_HOST.test(host) ? host : 'localhost'}${path.startsWith('/') ? path : '/'}`;
}

const PLAIN_HOST = /^[A-Za-z0-9.-]+(:[0-9]{1,5})?$|^\[[0-9A-Fa-f:.]+\](:[0-9]{1,5})?$/;

/** Reads a Node request's body with the Node collector, within `limits`; rejects with a `BodyReadError`. */
export function readNodeBody(req: IncomingMessage, limits: BodyLimits): Promise<Uint8Array> {
  return collectNodeStream(req, limits, declaredLength(req.headers['content-length']));
}
