import { invalidOption } from '../common/errors.js';
import { GATEWAY_EVENT_TYPES } from '../events/event-types.js';

/**
 * What `receiver.register()` needs of a client: `webhooks.register(...)`, which the client from
 * `jobhook/client` has. Taking the client as an argument, rather than importing it, keeps the
 * gateway client out of apps that only receive.
 */
export interface WebhookRegistrar {
  webhooks: {
    /** Creates or reuses the webhook; see `registerWebhook` in `jobhook/client`. */
    register(options: never): Promise<unknown>;
  };
}

/**
 * The options of the client's `webhooks.register` (with `jobhook/client`'s client:
 * `RegisterWebhookOptions`), less `secret` and `events`, which the receiver fills in itself.
 */
export type RegistrarOptions<C extends WebhookRegistrar> = Omit<
  Parameters<C['webhooks']['register']>[0],
  'secret' | 'events'
>;

/**
 * What `receiver.register()` resolves with: whatever the client's `webhooks.register` resolves
 * with. With `jobhook/client`'s client, that is `RegisterWebhookResult`: `{ webhook, created }`.
 */
export type RegistrarResult<C extends WebhookRegistrar> = ReturnType<C['webhooks']['register']>;

/**
 * Options of `receiver.register()`: `client` (from `jobhook/client`'s `createClient`), `url`, and
 * every option of `client.webhooks.register`; `secret` defaults to the receiver's first secret and
 * `events`, which defaults to the types the receiver has handlers for (all the gateway sends when
 * an `onAny` handler exists) and may be given to override that.
 */
export type ReceiverRegisterOptions<C extends WebhookRegistrar> = RegistrarOptions<C> & {
  /** The client to register with: `createClient({ apiKey, baseUrl })` from `jobhook/client`. */
  client: C;
  /** Default: the gateway event types this receiver has handlers for. */
  events?: readonly string[];
  /**
   * The secret the webhook is created with. Default: the receiver's first secret. Required when
   * the receiver's `secret` is a function (one webhook per tenant: register each with its own).
   */
  secret?: string;
};

/** What a receiver knows that registration needs. */
export interface ReceiverFacts {
  /** The receiver's first secret: the one new webhooks are created with. */
  secret: string | undefined;
  /** Whether the receiver picks its secrets with a function (then `register` needs `secret`). */
  picksSecrets: boolean;
  /** Types that have a handler (every known type when an `onAny` handler exists). */
  handled: readonly string[];
  /** Types that have a schema. */
  known: readonly string[];
}

/** `receiver.register(...)`: the client's registration with the receiver's secret and types filled in. */
export function registerReceiver<C extends WebhookRegistrar>(
  facts: ReceiverFacts,
  options: ReceiverRegisterOptions<C>,
): RegistrarResult<C> {
  const { client, events: given, secret: chosen, ...rest } = options;
  const secret = chosen ?? facts.secret;
  if (secret === undefined && facts.picksSecrets) {
    const rule = "given when the receiver's secret is a function: the secret this webhook is created with";
    return Promise.reject(invalidOption('receiver.register', 'secret', rule, secret)) as RegistrarResult<C>;
  }
  // Only types the gateway can send: a custom schema for another type would be refused with a 400.
  const supported = (types: readonly string[]) =>
    types.filter((type) => (GATEWAY_EVENT_TYPES as readonly string[]).includes(type));
  const handled = supported(facts.handled);
  const events = given ?? (handled.length > 0 ? handled : supported(facts.known));
  const request = { ...rest, events, ...(secret !== undefined && { secret }) };
  return client.webhooks.register(request as never) as RegistrarResult<C>;
}
