/**
 * Mount a jobhook receiver in Hono, on any runtime Hono runs on:
 *
 *   import { Hono } from 'hono';
 *   import { createReceiver } from 'jobhook';
 *   import { honoHandler } from 'jobhook/hono';
 *
 *   const receiver = createReceiver({ secret: process.env.WEBHOOK_SECRET! });
 *   const app = new Hono();
 *   app.post('/webhooks', honoHandler(receiver));
 *
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
  // Not `async`: the common case hands the receiver's promise to Hono as it is, rather than
  // wrapping it in another one (more turns of the microtask queue per request).
  return (c) => {
    if (c.req.raw.bodyUsed) return fromBodyCache(receiver, c);
    const incoming = nodeRequestOf(c.env);
    return incoming
      ? receiveNodeRequest(receiver, incoming, undefined).then((answer) => respond(incoming, answer))
      : receiver.fetch(c.req.raw);
  };
}

/** The answer as a `Response`, once a body left unread is dealt with (afterUnreadBody). */
function respond(incoming: IncomingMessage, answer: ReceiverResponse): Response | Promise<Response> {
  return bodyDone(incoming) ? toResponse(answer) : afterUnreadBody(incoming, answer).then(toResponse);
}

/**
 * Node's own request, on @hono/node-server (which hands it to handlers as `c.env.incoming`, its
 * documented way to the Node API); `undefined` on other runtimes and in `app.request()`.
 *
 * Why: read from Node's request, the headers and the body cost what they cost the Node adapter;
 * through the Web `Request` node-server builds over it, each header lookup and the body read pass
 * through its wrappers, which made Hono on Node serve about 0.78x the deliveries of a hand-written
 * Hono handler, against about 0.97x this way (bench/NOTES.md). The answer is still returned to Hono
 * as a `Response`, so Hono's middleware (a logger, secure headers) sees it as it would any other.
 * HTTP/1 only: over HTTP/2 the host is in `:authority`, which the Node path does not read.
 */
function nodeRequestOf(env: unknown): IncomingMessage | undefined {
  const incoming = (env as { incoming?: Partial<IncomingMessage> | null } | undefined)?.incoming;
  return incoming?.httpVersionMajor === 1 &&
    typeof incoming.on === 'function' &&
    typeof incoming.headers === 'object'
    ? (incoming as IncomingMessage)
    : undefined;
}

/** A middleware read the body first. */
async function fromBodyCache(receiver: Pick<Receiver, 'receive'>, c: Context): Promise<Response> {
  // Only a cached `arrayBuffer()` is still the signed bytes (Hono would derive one by re-encoding
  // its text or JSON); without it the core answers 500.
  const body = 'arrayBuffer' in c.req.bodyCache ? await c.req.arrayBuffer() : undefined;
  const result = await receiver.receive({
    method: c.req.method,
    headers: c.req.raw.headers,
    url: c.req.url,
    body,
  });
  return toResponse(result);
}
