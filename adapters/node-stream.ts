import type { IncomingMessage, ServerResponse } from 'node:http';
import getRawBody from 'raw-body';
import { answers, type ReceiverResponse } from '../src/wire/answers.js';
import { BodyReadError, onBodyAbort, type BodyInput, type BodyLimits } from '../src/wire/body.js';
import type { Receiver } from '../src/receiver/create-receiver.js';

/** What the Node-stream adapters need of a receiver (any event map has these). */
export type NodeReceiver = Pick<Receiver, 'receive' | 'maxBodyBytes'>;

/**
 * Answers one Node request: the single implementation behind the Express and Node adapters.
 * `body` is a raw copy a framework already holds (`req.rawBody`, `express.raw()`); without one,
 * the receiver reads the stream (within its limits) once the method and headers passed. Never
 * rejects.
 */
export async function answerNodeRequest(
  receiver: NodeReceiver,
  req: IncomingMessage,
  res: ServerResponse,
  body?: BodyInput,
): Promise<void> {
  let result: ReceiverResponse;
  try {
    result = await receiveNodeRequest(receiver, req, body);
  } catch {
    // `receive` promises never to reject; a receiver-like object that does must not crash the process.
    result = answers.internal();
  }
  // The client may have gone (an aborted upload) or another middleware may have answered.
  if (res.headersSent || res.destroyed) return;
  res.writeHead(result.status, {
    ...result.headers,
    'content-length': String(Buffer.byteLength(result.body)),
  });
  res.end(result.body);
}

function receiveNodeRequest(
  receiver: NodeReceiver,
  req: IncomingMessage,
  given: BodyInput | undefined,
): Promise<ReceiverResponse> {
  const { method = 'POST', headers } = req;
  if (given !== undefined) return receiver.receive({ method, headers, body: given });
  // A body parser that ran first ended the stream and kept no raw copy: `undefined` makes the core
  // answer 500 with the fix, where reading would fail or wait for data that never comes.
  if (!req.readable) return receiver.receive({ method, headers, body: undefined });
  // Read only if the receiver asks: not for other methods, nor for refused signature headers
  // (Node discards what was sent).
  return receiver.receive({ method, headers, body: (limits) => readNodeBody(req, limits) });
}

/**
 * Reads a Node request's body, refusing a declared `Content-Length` over the limit before reading
 * anything and stopping as soon as a streamed body passes it, so memory stays bounded by the limit
 * either way. After a refusal Node discards the rest of the request, which lets the client read the
 * answer. Rejects with a {@link BodyReadError}.
 */
export async function readNodeBody(req: IncomingMessage, limits: BodyLimits): Promise<Buffer> {
  // Past the receiver's time-out, stop taking data: the answer closes the connection.
  const stopListening = onBodyAbort(limits, () => req.pause());
  try {
    return await getRawBody(req, { length: req.headers['content-length'] ?? null, limit: limits.maxBytes });
  } catch (error) {
    const type = (error as { type?: unknown }).type;
    // Anything else (an aborted upload, a length mismatch) is a body that never fully arrived.
    throw new BodyReadError(type === 'entity.too.large' ? 'too_large' : 'unreadable', { cause: error });
  } finally {
    stopListening();
  }
}
