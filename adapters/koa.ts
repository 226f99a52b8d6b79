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
 *   app.use(bodyParser()); // or before: its `ctx.request.rawBody` is then what gets verified
 *
 * @module jobhook/koa
 */
import type { Middleware } from 'koa';
import { answerNodeRequest, type NodeReceiver } from './node-stream.js';

/** Options of {@link koaHandler}. */
export interface KoaHandlerOptions {
  /** Answer only this path (`ctx.path`, so query strings are ignored); other paths go to `next()`. */
  path?: string;
}

/**
 * A Koa middleware that answers deliveries with `receiver`. Without `path` it answers every request
 * that reaches it (for a router's route). It writes the answer itself (`ctx.respond = false`).
 */
export function koaHandler(receiver: NodeReceiver, options: KoaHandlerOptions = {}): Middleware {
  const { path } = options;
  return async (ctx, next) => {
    if (path !== undefined && ctx.path !== path) {
      await next();
      return;
    }
    ctx.respond = false;
    // @koa/bodyparser keeps the text it parsed as `rawBody`; without it the stream is read here.
    const { rawBody } = ctx.request as { rawBody?: unknown };
    await answerNodeRequest(receiver, ctx.req, ctx.res, typeof rawBody === 'string' ? rawBody : undefined);
  };
}
