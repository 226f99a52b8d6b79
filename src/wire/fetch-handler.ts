import { answers, type ReceiverResponse } from './answers.js';
import type { BodyInput } from './body.js';
import { concatBytes } from '../common/bytes.js';
import type { HeadersInput } from './headers.js';

type Receive = (input: {
  method?: string;
  headers: HeadersInput;
  body: BodyInput;
}) => Promise<ReceiverResponse>;

const EMPTY = new Uint8Array(0);
const TOO_LARGE = Symbol('too large');
const DECIMAL = /^\d+$/;

/** The Web-standard `(Request) => Response` handler over `receive`, reading at most the limit. */
export function createFetchHandler(receive: Receive, maxBodyBytes: number) {
  return async (request: Request): Promise<Response> => {
    let body: Uint8Array = EMPTY;
    if (request.method.toUpperCase() === 'POST') {
      const length = request.headers.get('content-length');
      const declared = Number(length);
      if (declared > maxBodyBytes) return toResponse(answers.tooLarge(maxBodyBytes));
      let read: Uint8Array | typeof TOO_LARGE;
      try {
        // A declared length within the limit bounds what the server lets through, so the body is
        // read in one call (servers such as @hono/node-server read it straight from the socket,
        // where `request.body` would build a web stream); a chunked body is streamed and counted.
        read =
          length !== null && DECIMAL.test(length)
            ? await readDeclared(request, maxBodyBytes)
            : await readLimited(request.body, maxBodyBytes);
      } catch {
        return toResponse(answers.bodyUnreadable());
      }
      if (read === TOO_LARGE) return toResponse(answers.tooLarge(maxBodyBytes));
      body = read;
    }
    return toResponse(await receive({ method: request.method, headers: request.headers, body }));
  };
}

function toResponse(result: ReceiverResponse): Response {
  return new Response(result.body, { status: result.status, headers: result.headers });
}

/** Reads a body whose length was declared (and is within the limit), checking it again once read. */
async function readDeclared(request: Request, limit: number): Promise<Uint8Array | typeof TOO_LARGE> {
  const body = new Uint8Array(await request.arrayBuffer());
  return body.byteLength > limit ? TOO_LARGE : body;
}

/** Reads a stream to its end, or stops (and cancels it) as soon as it passes `limit` bytes. */
async function readLimited(
  stream: ReadableStream<Uint8Array> | null,
  limit: number,
): Promise<Uint8Array | typeof TOO_LARGE> {
  if (stream === null) return EMPTY;
  const reader = stream.getReader();
  const chunks: Uint8Array[] = [];
  let total = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    total += value.byteLength;
    if (total > limit) {
      await reader.cancel().catch(() => undefined);
      return TOO_LARGE;
    }
    chunks.push(value);
  }
  return chunks.length === 1 ? chunks[0]! : concatBytes(chunks, total);
}
