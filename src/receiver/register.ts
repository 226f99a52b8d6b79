import { invalidOption } from '../common/option-checks.js';
import { GATEWAY_EVENT_TYPES } from '../events/event-types.js';

/** What `receiver.register()` needs of a client: given, not imported, so receive-only apps bundle no client. */
export interface WebhookRegistrar {
  webhooks: {
    /** Creates or reuses the webhook; see `registerWebhook` in `jobhook/client`. */
    register(options: never): Promise<unknown>;
  };
}

/** The client's `webhooks.register` options, less `secret` and `events`, which the receiver fills in. */
export type RegistrarOptions<C extends WebhookRegistrar> = Omit<
  Parameters<C['webhooks']['register']>[0],
  'secret' | 'events'
>;

/** What the client's `webhooks.register` resolves with (`{ webhook, created }` with `jobhook/client`'s). */
export type RegistrarResult<C extends WebhookRegistrar> = ReturnType<C['webhooks']['register']>;

/** Options of `receiver.register()`: `client`, `url`, and every option of `client.webhooks.register`. */
export type ReceiverRegisterOptions<C extends WebhookRegistrar> = RegistrarOptions<C> & {
  /** The client to register with: `createClient({ apiKey, baseUrl })` from `jobhook/client`. */
  client: C;
  /** Default: the types with handlers, and both job outcomes while results are kept. */
  events?: readonly string[];
  /** Default: the receiver's first secret; required when `secret` is a function (one webhook per tenant). */
  secret?: string;
  /**
   * When to first read the webhook's counters for deliveries this app answers 404 or 405 (the
   * receiver mounted at another path), in ms; each later read waits twice as long. Default 30 s.
   */
  checkMountAfterMs?: number;
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
