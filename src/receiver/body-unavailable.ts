import type { DeliveryFramework } from './types.js';

// What a receiver says when a body parser read the body first: the fix for the framework in use,
// in the log only (the sender cannot fix the app's mounting).

const FIXES: Record<DeliveryFramework | 'unknown', string> = {
  express:
    'mount the webhook route before any body parser (such as a global express.json()), or have the parser ' +
    'keep the raw bytes: app.use(express.json({ verify: keepRawBody })) with keepRawBody from jobhook/express; ' +
    'in NestJS, NestFactory.create(AppModule, { rawBody: true })',
  hono:
    'mount honoHandler before the middleware that reads the body, or have that middleware read it with ' +
    'c.req.arrayBuffer() (not c.req.json() or c.req.text()), whose bytes the handler reuses',
  koa: 'use koaHandler before bodyParser(): the text a parser keeps may differ from the bytes that arrived',
  node:
    'call nodeHandler before any middleware that reads the body (such as body-parser or express.json() in a ' +
    'connect-style app)',
  fastify: "register fastifyPlugin in a scope of its own, where no other plugin's content-type parser runs",
  unknown:
    'give receiver.receive() the body as it arrived (a Uint8Array, Buffer or string), such as req.rawBody ' +
    'with NestFactory.create(AppModule, { rawBody: true }) in NestJS, or receiver.fetch() a Request whose ' +
    'body was not read',
};

/** The framework's name as the log line gives it. */
const NAMES: Record<DeliveryFramework, string> = {
  express: 'Express',
  hono: 'Hono',
  koa: 'Koa',
  node: 'Node',
  fastify: 'Fastify',
};

/** The one log line for a consumed body: what happened, what it costs, and the fix for `framework`. */
export function bodyUnavailableLine(framework: DeliveryFramework | undefined): string {
  const known = framework !== undefined && Object.hasOwn(NAMES, framework);
  const where = known ? ` in ${NAMES[framework]}` : '';
  return (
    `jobhook: the request body was consumed by a body parser${where} before the receiver could read it, ` +
    'so its signature cannot be checked: every delivery is answered 500 body_unavailable (the gateway ' +
    `retries) until this is fixed. To fix it, ${FIXES[known ? framework : 'unknown']}.`
  );
}
