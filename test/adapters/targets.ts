// Every way of mounting a receiver, each as a real HTTP server. Adding one is a few lines here;
// the conformance suite runs all of its cases against each.
import { createServer } from 'node:http';
import { getRequestListener } from '@hono/node-server';
import express5 from 'express';
import express4 from 'express4';
import Fastify from 'fastify';
import { Hono } from 'hono';
import Koa from 'koa';
import { bodyParser } from '@koa/bodyparser';
import type { Receiver } from 'jobhook';
import { expressHandler, keepRawBody } from 'jobhook/express';
import { honoHandler } from 'jobhook/hono';
import { nodeHandler } from 'jobhook/node';
import { fastifyPlugin } from 'jobhook/fastify';
import { koaHandler } from 'jobhook/koa';
import { listen, type Running } from './http.js';

export const PATH = '/webhooks';

export interface Target {
  name: string;
  /** Mounted for POST only: other methods get the framework's 404 rather than the receiver's 405. */
  postOnly?: boolean;
  /** Listens on a free port, or on `port` (a restart on the same address). */
  start(receiver: Receiver, port?: number): Promise<Running>;
}

export const targets: Target[] = [
  ...[
    { name: 'express 5', express: express5 },
    { name: 'express 4', express: express4 },
  ].flatMap(({ name, express }) => [
    {
      name: `${name} app.post`,
      postOnly: true,
      start: (receiver: Receiver, port?: number) =>
        listen(express().post(PATH, expressHandler(receiver)), port),
    },
    {
      name: `${name} app.use`,
      start: (receiver: Receiver, port?: number) =>
        listen(express().use(PATH, expressHandler(receiver)), port),
    },
  ]),
  {
    name: 'hono app.post on @hono/node-server',
    postOnly: true,
    start: (receiver, port) =>
      listen(getRequestListener(new Hono().post(PATH, honoHandler(receiver)).fetch), port),
  },
  {
    name: 'hono app.all on @hono/node-server',
    start: (receiver, port) =>
      listen(getRequestListener(new Hono().all(PATH, honoHandler(receiver)).fetch), port),
  },
  {
    name: 'node http.createServer',
    start: (receiver, port) => listen(createServer(nodeHandler(receiver)), port),
  },
  {
    name: 'node middleware in express 5',
    start: (receiver, port) => listen(express5().use(nodeHandler(receiver, { path: PATH })), port),
  },
  {
    name: 'fastify 5 plugin, JSON routes beside it',
    start: async (receiver, port) => {
      const app = Fastify();
      app.post('/other', async (request) => request.body); // keeps Fastify's JSON parser
      await app.register(fastifyPlugin(receiver, { path: PATH }));
      await app.ready();
      return listen(app.server, port);
    },
  },
  {
    name: 'koa 3 middleware before @koa/bodyparser',
    start: (receiver, port) =>
      listen(
        new Koa()
          .use(koaHandler(receiver, { path: PATH }))
          .use(bodyParser())
          .callback(),
        port,
      ),
  },
  {
    name: 'receiver.fetch on @hono/node-server',
    start: (receiver, port) =>
      listen(
        getRequestListener((request) => receiver.fetch(request)),
        port,
      ),
  },
];

/** A mounting behind a body parser that ran first: `keepsBytes` when the parser kept the raw bytes. */
export interface ParserFirstTarget extends Target {
  /** Whether the signed bytes survive the parser exactly, or only as the text it decoded. */
  keepsBytes: boolean;
}

/**
 * Mountings behind a body parser that ran first and kept a raw copy, each with a JSON route
 * beside the webhook. The conformance suite above does not run on them: the parser, not the
 * receiver, answers what it refuses (an oversized or malformed body). parser-first.test.ts does.
 */
export const parserFirstTargets: ParserFirstTarget[] = [
  {
    name: 'express 5 after express.json({ verify: keepRawBody })',
    keepsBytes: true,
    start: (receiver, port) =>
      listen(
        express5()
          .use(express5.json({ verify: keepRawBody }))
          .post(PATH, expressHandler(receiver)),
        port,
      ),
  },
  {
    name: 'koa 3 middleware after @koa/bodyparser',
    keepsBytes: false,
    start: (receiver, port) =>
      listen(
        new Koa()
          .use(bodyParser())
          .use(koaHandler(receiver, { path: PATH }))
          .callback(),
        port,
      ),
  },
];
