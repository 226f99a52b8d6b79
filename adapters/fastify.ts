/**
 * Mount a jobhook receiver in Fastify 5, beside routes that parse JSON: `app.register(fastifyPlugin(receiver))`.
 * @module jobhook/fastify
 */
import { JobhookError } from '../src/common/errors.js';
import { optionNames, refuseUnknownOptions } from '../src/common/option-checks.js';
import type { FastifyPluginCallback } from 'fastify';
import { answers } from '../src/wire/answers.js';
import {
  afterUnreadBody,
  bodyDone,
  NodeDeliveryInput,
  readNodeBody,
  type NodeReceiver,
} from './node-stream.js';

/** Options of {@link fastifyPlugin}, given to it or to `app.register(plugin, options)`. */
export interface FastifyPluginOptions {
  /** The webhook route's path. Default `/webhooks`; `register`'s `prefix` is added before it. */
  path?: string;
}

const FASTIFY_PLUGIN_OPTIONS = optionNames<FastifyPluginOptions>()(['path']);

/** A Fastify plugin adding the webhook route in a scope of its own, where no content type is parsed. */
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
    // The receiver reads the body itself. JSON by name too: Fastify caches a named type's parser.
    const leaveUnread = (_request: unknown, _payload: unknown, parsed: (e: null, body: undefined) => void) =>
      parsed(null, undefined);
    scope.addContentTypeParser('application/json', leaveUnread);
    scope.addContentTypeParser('*', leaveUnread);
    // Fastify refuses a body over the limit before the handler runs: answered as every adapter does.
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
        new NodeDeliveryInput(raw, (limits) => readNodeBody(raw, limits), 'fastify', request.headers),
      );
      const { status, headers, body } = bodyDone(raw) ? answer : await afterUnreadBody(raw, answer);
      return reply.code(status).headers(headers).send(body);
    });
    done();
  };
}

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
