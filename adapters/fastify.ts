/**
 * Mount a jobhook receiver in Fastify 5, next to routes that keep their JSON parsing:
 *
 *   import Fastify from 'fastify';
 *   import { createReceiver } from 'jobhook';
 *   import { fastifyPlugin } from 'jobhook/fastify';
 *
 *   const receiver = createReceiver({ secret: process.env.WEBHOOK_SECRET! });
 *   const app = Fastify();
 *   await app.register(fastifyPlugin(receiver)); // POST /webhooks; { path: '/hooks/gateway' } to move it
 *
 * @module jobhook/fastify
 */
import { optionNames, refuseUnknownOptions, JobhookError } from '../src/common/errors.js';
import type { FastifyPluginCallback } from 'fastify';
import { answers } from '../src/wire/answers.js';
import {
  afterUnreadBody,
  bodyDone,
  NodeDeliveryInput,
  readNodeBody,
  type NodeReceiver,
} from './node-stream.js';

/**
 * Options of {@link fastifyPlugin}: given to `fastifyPlugin(receiver, { path })` or to
 * `app.register(fastifyPlugin(receiver), { path })`, either way.
 */
export interface FastifyPluginOptions {
  /** The webhook route's path. Default `/webhooks`; `register`'s `prefix` is added before it. */
  path?: string;
}

const FASTIFY_PLUGIN_OPTIONS = optionNames<FastifyPluginOptions>()(['path']);

/**
 * A Fastify plugin that adds the webhook route in its own encapsulated scope: there no content type
 * is parsed, and the receiver reads the raw bytes itself (within `maxBodyBytes` and
 * `bodyTimeoutMs`) once the signature headers passed, so the signature is checked on what was sent
 * while the app's other routes keep their parsers.
 */
export function fastifyPlugin(
  receiver: NodeReceiver,
  options: FastifyPluginOptions = {},
): FastifyPluginCallback<FastifyPluginOptions> {
  refuseUnknownOptions(options, FASTIFY_PLUGIN_OPTIONS, 'fastifyPlugin');
  return (scope, registered, done) => {
    let path: string;
    try {
      path = routePath(options.path, registered.path);
    } catch (error) {
      return done(error as Error);
    }
    scope.removeAllContentTypeParsers();
    // Leave the body unread: the receiver reads it (the one Node reader) only if the headers pass.
    // JSON by name as well as '*': Fastify finds a named type's parser from a cache, where the
    // catch-all costs a content-type parse per request (bench/NOTES.md).
    const leaveUnread = (_request: unknown, _payload: unknown, parsed: (e: null, body: undefined) => void) =>
      parsed(null, undefined);
    scope.addContentTypeParser('application/json', leaveUnread);
    scope.addContentTypeParser('*', leaveUnread);
    // Fastify refuses a body over the limit (declared or streamed) before the handler runs: answer it
    // as every other adapter does, the rest of the body dealt with as they do.
    scope.setErrorHandler(async (error, request, reply) => {
      const tooLarge = (error as { code?: unknown }).code === 'FST_ERR_CTP_BODY_TOO_LARGE';
      const answer = tooLarge ? answers.tooLarge(receiver.maxBodyBytes) : answers.bodyUnreadable();
      const { status, headers, body } = bodyDone(request.raw)
        ? answer
        : await afterUnreadBody(request.raw, answer);
      return reply.code(status).headers(headers).send(body);
    });
    scope.all(path, { bodyLimit: receiver.maxBodyBytes }, async (request, reply) => {
      const { raw } = request;
      const answer = await receiver.receive(
        new NodeDeliveryInput(raw, (limits) => readNodeBody(raw, limits), request.headers),
      );
      // A refusal given before the body was read to its end waits for the rest (afterUnreadBody).
      const { status, headers, body } = bodyDone(raw) ? answer : await afterUnreadBody(raw, answer);
      return reply.code(status).headers(headers).send(body);
    });
    done();
  };
}

/**
 * The route's path from the plugin's own options or `register`'s: a `path` given to `register`
 * used to be ignored silently, which left the route at `/webhooks`.
 */
function routePath(own: unknown, registered: unknown): string {
  const fromPlugin = checkedPath(own, 'fastifyPlugin(receiver, { path })');
  const fromRegister = checkedPath(registered, 'app.register(plugin, { path })');
  if (fromPlugin !== undefined && fromRegister !== undefined && fromPlugin !== fromRegister) {
    throw new JobhookError(
      'invalid_options',
      `fastifyPlugin was given two paths (${fromPlugin} to fastifyPlugin, ${fromRegister} to register): give one.`,
    );
  }
  return fromPlugin ?? fromRegister ?? '/webhooks';
}

function checkedPath(path: unknown, where: string): string | undefined {
  if (path === undefined || (typeof path === 'string' && path.startsWith('/'))) return path;
  throw new JobhookError('invalid_options', `\`path\` in ${where} must be a string that starts with "/".`);
}
