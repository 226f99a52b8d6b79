/**
 * Mount a jobhook receiver in Express 4 or 5, before any body parser:
 *
 *   import express from 'express';
 *   import { createReceiver } from 'jobhook';
 *   import { expressHandler } from 'jobhook/express';
 *
 *   const receiver = createReceiver({ secret: process.env.WEBHOOK_SECRET! });
 *   const app = express();
 *   app.post('/webhooks', expressHandler(receiver));
 *   app.use(express.json()); // parsers for your other routes come after
 *
 * @module jobhook/express
 */
import type { Request, RequestHandler } from 'express';
import type { BodyInput } from '../src/wire/body.js';
import { answerNodeRequest, type NodeReceiver } from './node-stream.js';

/**
 * An Express (4 or 5) handler that answers deliveries with `receiver`. Mount it before any body
 * parser; if one must run first, keep the raw bytes (`express.raw()` or `req.rawBody`).
 */
export function expressHandler(receiver: NodeReceiver): RequestHandler {
  return (req, res) => void answerNodeRequest(receiver, req, res, rawCopyOf(req));
}

/** The raw bytes a middleware kept (`req.rawBody`, or `express.raw()`'s Buffer), if any. */
function rawCopyOf(req: Request & { rawBody?: unknown }): BodyInput | undefined {
  if (Buffer.isBuffer(req.rawBody) || typeof req.rawBody === 'string') return req.rawBody;
  // A parsed object or a decoded string is not the signed bytes; the stream is read instead.
  return Buffer.isBuffer(req.body) ? req.body : undefined;
}
