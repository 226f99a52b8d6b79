/**
 * Mount a jobhook receiver in Hono, on any runtime: `app.post('/webhooks', honoHandler(receiver))`.
 * @module jobhook/hono
 */
import type { IncomingMessage } from 'node:http';
import type { Context, Handler } from 'hono';
import type { Receiver } from '../src/receiver/types.js';
import type { ReceiverResponse } from '../src/wire/answers.js';
import { toResponse } from '../src/wire/fetch-handler.js';
import { afterUnreadBody, bodyDone, receiveNodeRequest } from './node-stream.js';

/** A Hono handler that answers deliveries with `receiver`, on any runtime Hono runs on. */
export function honoHandler(receiver: Pick<Receiver, 'fetch' | 'receive'>): Handler {
  return (c) => {
    if (c.req.raw.bodyUsed) return fromBodyCache(receiver, c);
    const incoming = nodeRequestOf(c.env);
    return incoming
      ? receiveNodeRequest(receiver, 'hono', incoming, undefined).then((answer) => respond(incoming, answer))
      : receiver.fetch(c.req.raw);
  };
}

function respond(incoming: IncomingMessage, answer: ReceiverResponse): Response | Promise<Response> {
  return bodyDone(incoming) ? toResponse(answer) : afterUnreadBody(incoming, answer).then(toResponse);
}

/** Node's own request on @hono/node-server (`c.env.incoming`, HTTP/1), read as the Node adapter reads it. */
function nodeRequestOf(env: unknown): IncomingMessage | undefined {
  const incoming = (env as { incoming?: Partial<IncomingMessage> | null } | undefined)?.incoming;
  return incoming?.httpVersionMajor === 1 &&
    typeof incoming.on === 'function' &&
    typeof incoming.headers === 'object'
    ? (incoming as IncomingMessage)
    : undefined;
}

/** A middleware read the body first: only a cached `arrayBuffer()` is still the signed bytes. */
async function fromBodyCache(receiver: Pick<Receiver, 'receive'>, c: Context): Promise<Response> {
  const body = 'arrayBuffer' in c.req.bodyCache ? await c.req.arrayBuffer() : undefined;
  const result = await receiver.receive({
    method: c.req.method,
    headers: c.req.raw.headers,
    url: c.req.url,
    body,
    framework: 'hono',
  });
  return toResponse(result);
}
