/**
 * Mount a jobhook receiver in Express 4 or 5, before any body parser and before auth or CSRF
 * middleware (the gateway sends no cookie or session, only its signature):
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
 * If a global parser must come first, keep the raw bytes with
 * `app.use(express.json({ verify: keepRawBody }))`.
 *
 * @module jobhook/express
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Request, RequestHandler } from 'express';
import type { BodyInput } from '../src/wire/body.js';
import { answerNodeRequest, type NodeReceiver } from './node-stream.js';

/**
 * An Express (4 or 5) handler that answers deliveries with `receiver`. Mount it before any body
 * parser; if one must run first, give it `verify: keepRawBody`.
 */
export function expressHandler(receiver: NodeReceiver): RequestHandler {
  return (req, res) => void answerNodeRequest(receiver, req, res, rawCopyOf(req));
}

/**
 * A body parser's `verify` hook that keeps the raw bytes as `req.rawBody`, for apps whose global
 * parser runs before the webhook route: `app.use(express.json({ verify: keepRawBody }))`.
 * Works with `express.json`, `express.text`, `express.urlencoded` and `body-parser`.
 */
export function keepRawBody(req: IncomingMessage, _res: ServerResponse, buf: Buffer): void {
  Object.assign(req, { rawBody: buf });
}

/** The raw bytes a middleware kept (`req.rawBody`, or `express.raw()`'s Buffer), if any. */
function rawCopyOf(req: Request & { rawBody?: unknown }): BodyInput | undefined {
  if (Buffer.isBuffer(req.rawBody) || typeof req.rawBody === 'string') return req.rawBody;
  // A parsed object or a decoded string is not the signed bytes; the stream is read instead.
  return Buffer.isBuffer(req.body) ? req.body : undefined;
}
