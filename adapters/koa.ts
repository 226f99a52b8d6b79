/**
 * Mount a jobhook receiver in Koa (2 or 3), before or after `@koa/bodyparser`:
 *
 *   import Koa from 'koa';
 *   import { createReceiver } from 'jobhook';
 *   import { koaHandler } from 'jobhook/koa';
 *
 *   const receiver = createReceiver({ secret: process.env.WEBHOOK_SECRET! });
 *   const app = new Koa();
 *   app.use(koaHandler(receiver, { path: '/webhooks' }));
 *   app.use(bodyParser()); // parsers after it
 *
 * Mounted after `@koa/bodyparser`, it verifies the text the parser kept (`ctx.request.rawBody`)
 * only when that text is provably the bytes that arrived; otherwise it answers 500
 * `body_unavailable` (see {@link koaHandler}).
 *
 * @module jobhook/koa
 */
import { optionNames, refuseUnknownOptions } from '../src/common/errors.js';
import type { IncomingMessage } from 'node:http';
import type { Middleware } from 'koa';
import { answerNodeRequest, type NodeReceiver } from './node-stream.js';

/** Options of {@link koaHandler}. */
export interface KoaHandlerOptions {
  /** Answer only this path (`ctx.path`, so query strings are ignored); other paths go to `next()`. */
  path?: string;
}

const KOA_HANDLER_OPTIONS = optionNames<KoaHandlerOptions>()(['path']);

/**
 * A Koa middleware that answers deliveries with `receiver`. Without `path` it answers every request
 * that reaches it (for a router's route). It writes the answer itself (`ctx.respond = false`).
 *
 * Mount it before any body parser. After `@koa/bodyparser`, the request's bytes are gone and only
 * the text the parser decoded is left, which may differ from what was signed: the parser strips a
 * byte-order mark, decodes other charsets and inflates compressed bodies. That text is verified
 * only when the request declared its length, with no content encoding, and the text's UTF-8 is
 * exactly that long; otherwise (a chunked body, a stripped byte-order mark) the answer is 500
 * `body_unavailable`, naming the fix, so the sender retries rather than getting a 401 for good.
 */
export function koaHandler(receiver: NodeReceiver, options: KoaHandlerOptions = {}): Middleware {
  refuseUnknownOptions(options, KOA_HANDLER_OPTIONS, 'koaHandler');
  const { path } = options;
  return async (ctx, next) => {
    if (path !== undefined && ctx.path !== path) {
      await next();
      return;
    }
    ctx.respond = false;
    // @koa/bodyparser keeps the text it parsed as `rawBody`; without it the stream is read here.
    // Text that may not be the bytes is not passed on: with the stream already read, the receiver
    // then answers 500 body_unavailable.
    const { rawBody } = ctx.request as { rawBody?: unknown };
    const given =
      typeof rawBody === 'string' && isTheBytesThatArrived(rawBody, ctx.req) ? rawBody : undefined;
    await answerNodeRequest(receiver, ctx.req, ctx.res, given);
  };
}

/**
 * Whether a parser's text re-encodes to the very bytes received: the request declared its length
 * and no content encoding, and the text's UTF-8 has that length. A decoding that loses or changes
 * bytes changes the length (a stripped byte-order mark is 3 bytes shorter, a Latin-1 byte above
 * 0x7f re-encodes as 2), except one that replaced invalid UTF-8 by U+FFFD, and such a body is
 * refused (400) by every mounting anyway.
 */
function isTheBytesThatArrived(text: string, req: IncomingMessage): boolean {
  const declared = req.headers['content-length'];
  const encoding = req.headers['content-encoding'];
  if (declared === undefined || (encoding !== undefined && encoding.trim().toLowerCase() !== 'identity')) {
    return false;
  }
  return Buffer.byteLength(text, 'utf8') === Number(declared);
}
