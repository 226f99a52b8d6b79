// The two ways the end-to-end scenarios mount a receiver: Express, and Hono on @hono/node-server.
// Each records the status of every answer the receiver gave, to compare with the gateway's counters.
import { createServer, type RequestListener, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { getRequestListener } from '@hono/node-server';
import express from 'express';
import { Hono } from 'hono';
import type { Receiver } from 'jobhook';
import { expressHandler } from 'jobhook/express';
import { honoHandler } from 'jobhook/hono';

export interface App {
  /** The public URL of the webhook endpoint. */
  url: string;
  /** HTTP status of every answer the receiver gave, in order. */
  answered: number[];
  close(): Promise<void>;
}

export interface Mount {
  name: string;
  start(receiver: Receiver): Promise<App>;
}

export const mounts: Mount[] = [
  {
    name: 'express',
    start(receiver) {
      const answered: number[] = [];
      const app = express();
      app.use((_req, res, next) => {
        res.on('finish', () => answered.push(res.statusCode));
        next();
      });
      app.post('/webhooks', expressHandler(receiver));
      app.use(express.json()); // the app's other routes parse JSON; the webhook route comes first
      return listen(app, answered);
    },
  },
  {
    name: 'hono on @hono/node-server',
    start(receiver) {
      const answered: number[] = [];
      const app = new Hono();
      app.use(async (c, next) => {
        await next();
        answered.push(c.res.status);
      });
      app.post('/webhooks', honoHandler(receiver));
      return listen(getRequestListener(app.fetch), answered);
    },
  },
];

async function listen(listener: RequestListener, answered: number[]): Promise<App> {
  const server: Server = createServer(listener);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/webhooks`,
    answered,
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
