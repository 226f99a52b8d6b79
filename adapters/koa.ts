/**
 * Mount a jobhook receiver in Koa 2 or 3, best before any body parser: `app.use(koaHandler(receiver, { path }))`.
 * @module jobhook/koa
 */
import { optionNames, refuseUnknownOptions } from '../src/common/option-checks.js';
import type { IncomingMessage } from 'node:http';
import type { Middleware } from 'koa';
import { answerNodeRequest, type NodeReceiver } from './node-stream.js';

/** Options of {@link koaHandler}. */
export interface KoaHandlerOptions {
  /** Answer only this path (`ctx.path`, so query strings are ignored); other paths go to `next()`. */
  path?: string;
}

const KOA_HANDLER_OPTIONS = optionNames<KoaHandlerOptions>()(['path']);

/** A Koa middleware; after `@koa/bodyparser`, text not provably the bytes received gets 500 `body_unavailable`. */
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
    await answerNodeRequest(receiver, 'koa', ctx.req, ctx.res, given);
  };
}

/** Whether a parser's text is the bytes received: declared length, no encoding, and UTF-8 of that length. */
function isTheBytesThatArrived(text: string, req: IncomingMessage): boolean {
  const declared = req.headers['content-length'];
  const encoding = req.headers['content-encoding'];
  if (declared === undefined || (encoding !== undefined && encoding.trim().toLowerCase() !== 'identity')) {
    return false;
  }
  return Buffer.byteLength(text, 'utf8') === Number(declared);
}
