/**
 * Mount a jobhook receiver in Express 4 or 5, before any body parser: `app.post(path, expressHandler(receiver))`.
 * @module jobhook/express
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Request, RequestHandler } from 'express';
import type { BodyInput } from '../src/wire/body.js';
import { answerNodeRequest, type NodeReceiver } from './node-stream.js';

/** An Express (4 or 5) handler; mount it before any body parser, or give that parser `verify: keepRawBody`. */
export function expressHandler(receiver: NodeReceiver): RequestHandler {
  return (req, res) => void answerNodeRequest(receiver, 'express', req, res, rawCopyOf(req));
}

/** A body parser's `verify` hook that keeps the raw bytes: `app.use(express.json({ verify: keepRawBody }))`. */
export function keepRawBody(req: IncomingMessage, _res: ServerResponse, buf: Buffer): void {
  Object.assign(req, { rawBody: buf });
}

/** The raw bytes a middleware kept (`req.rawBody`, or `express.raw()`'s Buffer), if any. */
function rawCopyOf(req: Request & { rawBody?: unknown }): BodyInput | undefined {
  if (Buffer.isBuffer(req.rawBody) || typeof req.rawBody === 'string') return req.rawBody;
  return Buffer.isBuffer(req.body) ? req.body : undefined;
}
