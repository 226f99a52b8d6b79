/**
 * Mount a jobhook receiver on Node's own HTTP server, or in any connect-style app:
 *
 *   import http from 'node:http';
 *   import { createReceiver } from 'jobhook';
 *   import { nodeHandler } from 'jobhook/node';
 *
 *   const receiver = createReceiver({ secret: process.env.WEBHOOK_SECRET! });
 *   http.createServer(nodeHandler(receiver, { path: '/webhooks' })).listen(3000);
 *   // or: app.use(nodeHandler(receiver, { path: '/webhooks' })) in Connect, Express, Polka…
 *
 * @module jobhook/node
 */
import { optionNames, refuseUnknownOptions } from '../src/common/errors.js';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { answers } from '../src/wire/answers.js';
import { answerNodeRequest, type NodeReceiver } from './node-stream.js';

/** Options of {@link nodeHandler}. */
export interface NodeHandlerOptions {
  /**
   * Answer only this path (query strings ignored); other paths go to `next()`, or get a 404.
   * Under a mount point (`app.use('/api', nodeHandler(receiver, { path }))`) both the full path
   * (`/api/webhooks`) and the path relative to the mount (`/webhooks`) match: Express, Connect and
   * Polka strip the mount from `req.url` and keep the full one in `req.originalUrl`.
   */
  path?: string;
}

/** A Node request listener that also works as `(req, res, next)` middleware. */
export type NodeHandler = (
  req: IncomingMessage,
  res: ServerResponse,
  next?: (error?: unknown) => void,
) => void;

const NODE_HANDLER_OPTIONS = optionNames<NodeHandlerOptions>()(['path']);

/**
 * Answers deliveries with `receiver`: pass it to `http.createServer`, or `app.use` it in Connect,
 * Express, Polka and other connect-style apps.
 */
export function nodeHandler(receiver: NodeReceiver, options: NodeHandlerOptions = {}): NodeHandler {
  refuseUnknownOptions(options, NODE_HANDLER_OPTIONS, 'nodeHandler');
  const { path } = options;
  return (req, res, next) => {
    if (path !== undefined && !matchesPath(req, path)) {
      if (next) return next();
      const notFound = answers.notFound();
      res.writeHead(notFound.status, notFound.headers).end(notFound.body);
      return;
    }
    void answerNodeRequest(receiver, req, res);
  };
}

/** Whether the request is for `path`, as written relative to a mount point or in full. */
function matchesPath(req: IncomingMessage & { originalUrl?: unknown }, path: string): boolean {
  if (isPath(req.url ?? '/', path)) return true;
  const { originalUrl } = req;
  return typeof originalUrl === 'string' && originalUrl !== req.url && isPath(originalUrl, path);
}

/** Whether `url` is `path`, with or without a query string (compared without splitting the URL). */
function isPath(url: string, path: string): boolean {
  return (
    url.startsWith(path) && (url.length === path.length || url.charCodeAt(path.length) === QUESTION_MARK)
  );
}

const QUESTION_MARK = 0x3f;
