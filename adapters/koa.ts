/**
 * Mount a jobhook receiver in Koa 2 or 3, best before any body parser:
 * `app.use(koaHandler(receiver, { path: '/webhooks' }))`.
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
 * A Koa middleware that answers deliveries with `receiver` (every request without `path`). After
 * `@koa/bodyparser`, the text it kept is verified only when it provably re-encodes to the bytes
 * received; otherwise the answer is 500 `body_unavailable`, so the sender retries.
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
    const { rawBody } = ctx.request as { rawBody?: unknown };
    const given =
      typeof rawBody === 'string' && isTheBytesThatArrived(rawBody, ctx.req) ? rawBody : undefined;
    await answerNodeRequest(receiver, ctx.req, ctx.res, given);
  };
}

/**
 * Whether a parser's text re-encodes to the bytes received: a declared length, no content
 * encoding, and a UTF-8 length equal to it (a decoding that changes bytes changes the length).
 */
function isTheBytesThatArrived(text: string, req: IncomingMessage): boolean {
  const declared = req.headers['content-length'];
  const encoding = req.headers['content-encoding'];
  if (declared === undefined || (encoding !== undefined && encoding.trim().toLowerCase() !== 'identity')) {
    return false;
  }
  return Buffer.byteLength(text, 'utf8') === Number(declared);
}
