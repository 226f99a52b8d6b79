import { createClient, type ClientOptions, type GatewayClient } from './client.js';
import { registerWebhook, type RegisterWebhookOptions, type RegisterWebhookResult } from './register.js';

/** The event types the gateway can deliver (section 6). */
const GATEWAY_EVENTS: readonly string[] = ['job.completed', 'job.failed'];

/** Options of `receiver.register()`. */
export interface ReceiverRegisterOptions {
  /** A client, or the options to create one. */
  client: GatewayClient | ClientOptions;
  /** The public URL the receiver is reachable at. */
  url: string;
  /** Default: the types the receiver has handlers for (all it knows when an `onAny` handler exists). */
  events?: readonly string[];
  /** See `registerWebhook`: create a fresh webhook with the receiver's first secret, then drop the old. */
  rotateSecret?: boolean;
  /** Restrict the webhook to the client's key, by its id. */
  apiKeyId?: number;
  /** See `registerWebhook`: retries while the gateway is unreachable or answers 429/5xx. Default 6. */
  startupRetries?: RegisterWebhookOptions['startupRetries'];
  signal?: AbortSignal;
}

/** What a receiver tells `register` about itself. */
export interface ReceiverRegistration {
  /** The receiver's first secret: the one new webhooks are created with. */
  secret: string | undefined;
  /** Types that have a handler. */
  handled: readonly string[];
  /** Types that have a schema. */
  known: readonly string[];
}

/** `receiver.register(...)`: registerWebhook with the receiver's secret and event types filled in. */
export function registerReceiver(
  receiver: ReceiverRegistration,
  options: ReceiverRegisterOptions,
): Promise<RegisterWebhookResult> {
  const client = 'webhooks' in options.client ? options.client : createClient(options.client);
  // Only types the gateway can send: a custom schema for another type would be refused with a 400.
  const supported = (types: readonly string[]) => types.filter((type) => GATEWAY_EVENTS.includes(type));
  const handled = supported(receiver.handled);
  const events = options.events ?? (handled.length > 0 ? handled : supported(receiver.known));
  return registerWebhook(client, {
    url: options.url,
    events,
    ...(receiver.secret !== undefined && { secret: receiver.secret }),
    ...(options.apiKeyId !== undefined && { apiKeyId: options.apiKeyId }),
    ...(options.rotateSecret !== undefined && { rotateSecret: options.rotateSecret }),
    ...(options.startupRetries !== undefined && { startupRetries: options.startupRetries }),
    ...(options.signal !== undefined && { signal: options.signal }),
  });
}
