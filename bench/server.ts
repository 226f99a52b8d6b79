/**
 * One HTTP server for the load test, run in its own process: `server.ts <kind>`. It reports its
 * port (and its memory when asked to stop) over IPC, and exits when the parent goes away.
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { serve } from '@hono/node-server';
import { Webhooks, createNodeMiddleware } from '@octokit/webhooks';
import express from 'express';
import Fastify from 'fastify';
import { Hono } from 'hono';
import Koa from 'koa';
import getRawBody from 'raw-body';
import { KEY, PLAIN_SECRET, SECRET } from './fixtures.js';
import { verifyByHand } from './handwritten.js';
import {
  createReceiver,
  expressHandler,
  fastifyPlugin,
  honoHandler,
  koaHandler,
  loadBaseline,
  nodeHandler,
  type Build,
} from './jobhook.js';

export const SERVER_KINDS = [
  'express-jobhook',
  'express-hand',
  'hono-jobhook',
  'hono-hand',
  'fastify-jobhook',
  'fastify-hand',
  'koa-jobhook',
  'koa-hand',
  'node-jobhook',
  'node-hand',
  'node-octokit',
] as const;
/** `node-jobhook` built from the build before (BENCH_BASELINE), run only in before/after runs. */
export const BEFORE_KIND = 'node-jobhook-before';
export type ServerKind = (typeof SERVER_KINDS)[number] | typeof BEFORE_KIND;

export const PATH = '/webhooks';
const OK = JSON.stringify({ ok: true });
const REJECTED = JSON.stringify({ ok: false });
const LIMIT = 1024 * 1024;
const noop = () => {};
/** Handler runs of this server's receiver: the parent checks every request ran it (none was a duplicate). */
let handled = 0;

function receiver(create: Build['createReceiver'] = createReceiver) {
  return create({ secret: SECRET }).onJobCompleted(() => void handled++);
}

function answerByHand(res: ServerResponse, event: unknown) {
  const body = event === undefined ? REJECTED : OK;
  res
    .writeHead(event === undefined ? 401 : 200, {
      'content-type': 'application/json',
      'content-length': Buffer.byteLength(body),
    })
    .end(body);
}

/** The same check on a Node-style request's headers and raw body; `undefined` when refused. */
function verifyNode(headers: IncomingMessage['headers'], body: Buffer): unknown {
  try {
    return verifyByHand(
      KEY,
      headers['webhook-id'],
      headers['webhook-timestamp'],
      headers['webhook-signature'],
      body,
    );
  } catch {
    return undefined;
  }
}

/** A plain node:http handler, written as most users would: collect the body, verify, answer. */
function nodeByHand(req: IncomingMessage, res: ServerResponse) {
  if (req.method !== 'POST' || req.url !== PATH) return void res.writeHead(404).end();
  const chunks: Buffer[] = [];
  let length = 0;
  req.on('data', (chunk: Buffer) => {
    length += chunk.length;
    if (length <= LIMIT) chunks.push(chunk);
  });
  req.on('end', () => {
    if (length > LIMIT) return void res.writeHead(413).end();
    answerByHand(res, verifyNode(req.headers, Buffer.concat(chunks)));
  });
}

type Listening = (port: number) => void;

async function start(kind: ServerKind, listening: Listening) {
  const listen = (server: ReturnType<typeof createServer>) =>
    server.listen(0, '127.0.0.1', () => listening((server.address() as AddressInfo).port));
  switch (kind) {
    case 'express-jobhook': {
      const app = express();
      app.post(PATH, expressHandler(receiver()));
      return listen(createServer(app));
    }
    case 'express-hand': {
      const app = express();
      app.post(PATH, express.raw({ type: '*/*', limit: LIMIT }), (req, res) => {
        const event = verifyNode(req.headers, req.body as Buffer);
        if (event === undefined) res.status(401).json({ ok: false });
        else res.status(200).json({ ok: true });
      });
      return listen(createServer(app));
    }
    case 'hono-jobhook': {
      const app = new Hono();
      app.post(PATH, honoHandler(receiver()));
      return serve({ fetch: app.fetch, port: 0, hostname: '127.0.0.1' }, (info) => listening(info.port));
    }
    case 'hono-hand': {
      const app = new Hono();
      app.post(PATH, async (c) => {
        const body = Buffer.from(await c.req.arrayBuffer());
        let event: unknown;
        try {
          event = verifyByHand(
            KEY,
            c.req.header('webhook-id'),
            c.req.header('webhook-timestamp'),
            c.req.header('webhook-signature'),
            body,
          );
        } catch {
          event = undefined;
        }
        return event === undefined ? c.json({ ok: false }, 401) : c.json({ ok: true });
      });
      return serve({ fetch: app.fetch, port: 0, hostname: '127.0.0.1' }, (info) => listening(info.port));
    }
    case 'fastify-jobhook': {
      const app = Fastify();
      void app.register(fastifyPlugin(receiver(), { path: PATH }));
      return void listenFastify(app, listening);
    }
    case 'fastify-hand': {
      // As Fastify's docs have it for signed bodies: a scope whose JSON parser keeps the Buffer.
      const app = Fastify();
      void app.register((scope, _options, done) => {
        scope.addContentTypeParser(
          'application/json',
          { parseAs: 'buffer', bodyLimit: LIMIT },
          (_r, body, parsed) => parsed(null, body),
        );
        scope.post(PATH, async (request, reply) => {
          const event = verifyNode(request.headers, request.body as Buffer);
          return event === undefined ? reply.code(401).send({ ok: false }) : reply.send({ ok: true });
        });
        done();
      });
      return void listenFastify(app, listening);
    }
    case 'koa-jobhook': {
      const app = new Koa();
      app.use(koaHandler(receiver(), { path: PATH }));
      return listen(createServer(app.callback()));
    }
    case 'koa-hand': {
      // raw-body is what Koa's own body parsers read with.
      const app = new Koa();
      app.use(async (ctx) => {
        if (ctx.method !== 'POST' || ctx.path !== PATH) return void (ctx.status = 404);
        const body = await getRawBody(ctx.req, { length: ctx.get('content-length') || null, limit: LIMIT });
        const event = verifyNode(ctx.headers, body);
        ctx.status = event === undefined ? 401 : 200;
        ctx.body = { ok: event !== undefined };
      });
      return listen(createServer(app.callback()));
    }
    case 'node-jobhook':
      return listen(createServer(nodeHandler(receiver(), { path: PATH })));
    case BEFORE_KIND: {
      const before = await loadBaseline();
      return listen(createServer(before.nodeHandler(receiver(before.createReceiver), { path: PATH })));
    }
    case 'node-hand':
      return listen(createServer(nodeByHand));
    case 'node-octokit': {
      const webhooks = new Webhooks({ secret: PLAIN_SECRET });
      webhooks.on('ping', noop);
      return listen(createServer(createNodeMiddleware(webhooks, { path: PATH })));
    }
  }
}

async function listenFastify(app: ReturnType<typeof Fastify>, listening: Listening) {
  await app.listen({ port: 0, host: '127.0.0.1' });
  listening((app.server.address() as AddressInfo).port);
}

export interface ServerMessage {
  port?: number;
  rss: number;
  maxRss: number;
}

const memory = () => ({ rss: process.memoryUsage().rss, maxRss: process.resourceUsage().maxRSS * 1024 });

if (process.send) {
  const kind = process.argv[2] as ServerKind;
  if (![...SERVER_KINDS, BEFORE_KIND].includes(kind)) throw new Error(`Unknown server kind: ${kind}`);
  process.on('message', (message) => {
    if (message === 'cpu') {
      const { user, system } = process.cpuUsage();
      process.send!({ cpuUs: user + system, handled });
    } else if (message === 'stop') {
      process.send!(memory() satisfies ServerMessage, () => process.exit(0));
    }
  });
  process.on('disconnect', () => process.exit(0));
  await start(kind, (port) => process.send!({ port, ...memory() } satisfies ServerMessage));
}
