import { checkOption, optionNames, refuseUnknownOptions } from '../common/option-checks.js';
import { IOREDIS } from './dedupe-store.js';
import { isJobResult, type JobResult, type ResultChannel } from '../results/job-result.js';

/** What the channel uses of an ioredis client, typed here so ioredis stays optional. */
export interface RedisPubSubClient {
  /** Publishes one result. */
  publish(channel: string, message: string): Promise<unknown>;
  /** A new connection with the same options, for subscribing. */
  duplicate(): RedisSubscriber;
}

/** What the channel uses of the connection it subscribes on (`redis.duplicate()`). */
export interface RedisSubscriber {
  /** `ready` once connected. */
  readonly status: string;
  /** Connection errors: logged, never thrown. */
  on(event: 'error', listener: (error: Error) => void): unknown;
  /** Messages on the subscribed channel. */
  on(event: 'message', listener: (channel: string, message: string) => void): unknown;
  /** Subscribes to the results channel. */
  subscribe(channel: string): Promise<unknown>;
  /** Closes politely (on `receiver.close()`). */
  quit(): Promise<unknown>;
  /** Closes at once. */
  disconnect(): void;
}

/** Options of {@link redisResultChannel}. */
export interface RedisResultChannelOptions {
  /** An ioredis client, used to publish. The channel subscribes on its own `redis.duplicate()`. */
  redis: RedisPubSubClient;
  /** Prefix of the pub/sub channel's name, `<prefix>results`. Default `jobhook:`. */
  prefix?: string;
}

/** A message larger than this is not a result jobhook published (a body is at most 1 MiB). */
const MAX_MESSAGE_BYTES = 2 * 1024 * 1024;

const REDIS_RESULT_CHANNEL_OPTIONS = optionNames<RedisResultChannelOptions>()(['redis', 'prefix']);

/** Shares job results between instances over Redis pub/sub, on its own `redis.duplicate()`. */
export function redisResultChannel(options: RedisResultChannelOptions): ResultChannel {
  refuseUnknownOptions(options, REDIS_RESULT_CHANNEL_OPTIONS, 'redisResultChannel');
  const redis = options?.redis;
  const valid = typeof redis?.publish === 'function' && typeof redis.duplicate === 'function';
  checkOption('redisResultChannel', 'redis', redis, valid, IOREDIS);
  const channel = `${options.prefix ?? 'jobhook:'}results`;
  let subscriber: RedisSubscriber | undefined;

  return {
    async publish(result) {
      const { taskId, status, data } = result;
      await redis.publish(channel, JSON.stringify({ taskId, status, data }));
    },
    async subscribe(onResult, onError) {
      subscriber = redis.duplicate();
      subscriber.on('error', onError);
      subscriber.on('message', (from: string, message: string) => {
        if (from !== channel) return;
        const result = decode(message);
        if (result) onResult(result);
        else onError(new Error(`ignored a message on ${channel} that is not a job result`));
      });
      await subscriber.subscribe(channel);
    },
    async close() {
      const closing = subscriber;
      subscriber = undefined;
      if (!closing) return;
      // quit() waits for the server's goodbye; a connection that never came up is just dropped.
      if (closing.status === 'ready') await closing.quit().catch(() => closing.disconnect());
      else closing.disconnect();
    },
  };
}

function decode(message: string): JobResult | undefined {
  if (message.length > MAX_MESSAGE_BYTES) return undefined;
  let value: unknown;
  try {
    value = JSON.parse(message);
  } catch {
    return undefined;
  }
  const candidate = { ...(value as object), receivedAt: Date.now() };
  return isJobResult(candidate) ? candidate : undefined;
}
