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
import type { Context, Handler } from 'hono';
import type { Receiver } from '../src/receiver/types.js';

/** A Hono handler that answers deliveries with `receiver`, on any runtime Hono runs on. */
export function honoHandler(receiver: Pick<Receiver, 'fetch' | 'receive'>): Handler {
  // Not `async`: the common case hands `receiver.fetch`'s promise to Hono as it is, rather than
  // wrapping it in another one (more turns of the microtask queue per request).
  return (c) => (c.req.raw.bodyUsed ? fromBodyCache(receiver, c) : receiver.fetch(c.req.raw));
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
  return new Response(result.body, { status: result.status, headers: result.headers });
}
