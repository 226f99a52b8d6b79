import type { IncomingMessage, ServerResponse } from 'node:http';
import getRawBody from 'raw-body';
import { answers, type ReceiverResponse } from '../src/wire/answers.js';
import type { BodyInput } from '../src/wire/body.js';
import type { Receiver } from '../src/receiver/create-receiver.js';

/** What the Node-stream adapters need of a receiver (any event map has these). */
export type NodeReceiver = Pick<Receiver, 'receive' | 'maxBodyBytes'>;

/**
 * Answers one Node request: the single implementation behind the Express and Node adapters.
 * `body` is a raw copy a framework already holds (`req.rawBody`, `express.raw()`); without one,
 * the stream is read here within the receiver's limit. Never rejects.
 */
export async function answerNodeRequest(
  receiver: NodeReceiver,
  req: IncomingMessage,
  res: ServerResponse,
  body?: BodyInput,
): Promise<void> {
  const result = await receiveNodeRequest(receiver, req, body);
  // The client may have gone (an aborted upload) or another middleware may have answered.
  if (res.headersSent || res.destroyed) return;
  res.writeHead(result.status, {
    ...result.headers,
    'content-length': String(Buffer.byteLength(result.body)),
  });
  res.end(result.body);
}

async function receiveNodeRequest(
  receiver: NodeReceiver,
  req: IncomingMessage,
  given: BodyInput | undefined,
): Promise<ReceiverResponse> {
  const { method = 'POST', headers } = req;
  // Non-POST requests are refused by the core without a body; Node discards what was sent.
  if (given !== undefined || method.toUpperCase() !== 'POST') {
    return receiver.receive({ method, headers, body: given });
  }
  // A body parser that ran first ended the stream and kept no raw copy: `undefined` makes the core
  // answer 500 with the fix, where reading would fail or wait for data that never comes.
  if (!req.readable) return receiver.receive({ method, headers, body: undefined });
  const read = await readLimited(req, receiver.maxBodyBytes);
  return Buffer.isBuffer(read) ? receiver.receive({ method, headers, body: read }) : read;
}

/**
 * Reads the body, refusing a declared `Content-Length` over the limit before reading anything and
 * stopping as soon as a streamed body passes it, so memory stays bounded by the limit either way.
 * After a refusal Node discards the rest of the request, which lets the client read the 413.
 */
async function readLimited(req: IncomingMessage, limit: number): Promise<Buffer | ReceiverResponse> {
  try {
    return await getRawBody(req, { length: req.headers['content-length'] ?? null, limit });
  } catch (error) {
    const type = (error as { type?: unknown }).type;
    // Anything else (an aborted upload, a length mismatch) is a body that never fully arrived.
    return type === 'entity.too.large' ? answers.tooLarge(limit) : answers.bodyUnreadable();
  }
}
