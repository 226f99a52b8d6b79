/**
 * Mount a jobhook receiver on Node's HTTP server or a connect-style app: `nodeHandler(receiver, { path })`.
 * @module jobhook/node
 */
import { optionNames, refuseUnknownOptions } from '../src/common/option-checks.js';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { answers } from '../src/wire/answers.js';
import { answerNodeRequest, type NodeReceiver } from './node-stream.js';

/** Options of {@link nodeHandler}. */
export interface NodeHandlerOptions {
  /** Answer only this path, relative to a mount point or in full; others go to `next()`, or get a 404. */
  path?: string;
}

/** A Node request listener that also works as `(req, res, next)` middleware. */
export type NodeHandler = (
  req: IncomingMessage,
  res: ServerResponse,
  next?: (error?: unknown) => void,
) => void;

const NODE_HANDLER_OPTIONS = optionNames<NodeHandlerOptions>()(['path']);

/** Answers deliveries with `receiver`: for `http.createServer`, or `app.use` in a connect-style app. */
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
    void answerNodeRequest(receiver, 'node', req, res);
  };
}

function matchesPath(req: IncomingMessage & { originalUrl?: unknown }, path: string): boolean {
  if (isPath(req.url ?? '/', path)) return true;
  const { originalUrl } = req;
  return typeof originalUrl === 'string' && originalUrl !== req.url && isPath(originalUrl, path);
}

function isPath(url: string, path: string): boolean {
  return (
    url.startsWith(path) && (url.length === path.length || url.charCodeAt(path.length) === QUESTION_MARK)
  );
}

const QUESTION_MARK = 0x3f;
