import { GatewayError } from './errors.js';
import {
  checkOption,
  func,
  httpUrlOption,
  optionNames,
  refuseUnknownOptions,
  wholeNumber,
} from '../common/option-checks.js';
import { networkCodeOf, type RequestOptions } from './request.js';
import { resolveRetry, withRetries, type RetryOptions } from './retry.js';
import { mayBeIncomplete } from './pages.js';
import type { CreateWebhookInput, Webhook } from './types.js';

/** What registration needs of a client (a `GatewayClient` has it). */
export interface WebhooksClient {
  webhooks: {
    /** POST /api/v1/webhooks */
    create(input: CreateWebhookInput, options?: RequestOptions): Promise<Webhook>;
    /** GET /api/v1/webhooks */
    list(options?: RequestOptions): Promise<Webhook[]>;
    /** DELETE /api/v1/webhooks/{id} */
    delete(id: number, options?: RequestOptions): Promise<{ id: number }>;
  };
}

/** Options of {@link registerWebhook}. */
export interface RegisterWebhookOptions {
  /** The public URL of your receiver. Only webhooks with exactly this URL are ever deleted. */
  url: string;
  /** The receiver's secret, sent as `secret_key` when a webhook is created. */
  secret?: string;
  /** Event types to subscribe to. */
  events: readonly string[];
  /** Restricts the webhook to the key with this id (the client's key). */
  apiKeyId?: number;
  /** Create a new webhook even if one fits, then delete the old: for the deploy that rotates the secret. */
  rotateSecret?: boolean;
  /** Retries while the gateway is unreachable or answers 429/5xx. Default 6 (25 s), 2 for a refused connection before any answer; `false` for none. */
  startupRetries?: number | false | StartupRetryOptions;
  signal?: AbortSignal;
  /** Told when the list may be incomplete and a webhook is created anyway. Default `console.warn`. */
  onWarning?: (message: string) => void;
}

/** How `registerWebhook` retries; each retry lists again first, so it still ends with one webhook. */
export interface StartupRetryOptions extends Omit<RetryOptions, 'methods'> {
  /** Called before each wait, to log that the gateway is not answering yet. */
  onRetry?: (error: GatewayError, retry: number, delayMs: number) => void;
}

const REGISTER_OPTIONS = optionNames<RegisterWebhookOptions>()([
  'url',
  'secret',
  'events',
  'apiKeyId',
  'rotateSecret',
  'startupRetries',
  'signal',
  'onWarning',
]);

const WHERE = 'register';

const DEFAULT_STARTUP_RETRIES = { limit: 6, baseDelayMs: 500, maxDelayMs: 10_000 } as const;

async function withStartupRetries<T>(
  attempt: () => Promise<T>,
  option: number | false | StartupRetryOptions | undefined,
  signal: AbortSignal | undefined,
): Promise<T> {
  const rule = 'a number of retries, false, or an object such as { limit: 6, onRetry }';
  const shaped = option === undefined || typeof option === 'number' || typeof option === 'boolean';
  checkOption(
    WHERE,
    'startupRetries',
    option,
    shaped || (typeof option === 'object' && option !== null),
    rule,
  );
  if (typeof option === 'number') wholeNumber(WHERE, 'startupRetries', option, 0, { min: 0 });
  const given =
    option === false ? { limit: 0 } : typeof option === 'number' ? { limit: option } : (option ?? {});
  const { onRetry: _onRetry, ...retryOptions } = given;
  const retry = resolveRetry({ ...DEFAULT_STARTUP_RETRIES, ...retryOptions }, WHERE, 'startupRetries');
  // Explicit retries are the caller's to spend; the default stops early on a wrong address.
  const chosen = option !== undefined && (typeof option !== 'object' || option.limit !== undefined);
  let answered = chosen;
  const attemptNoting = () =>
    attempt().catch((error: unknown) => {
      if (!(error instanceof GatewayError && wrongAddress(error))) answered = true;
      throw error;
    });
  // A refused connection or a name that does not resolve, before the gateway ever answered, is a
  // wrong address far more often than a gateway starting: two quick retries cover one started beside the app.
  const enough = (error: GatewayError, retries: number) =>
    !answered && retries >= REFUSED_RETRIES && wrongAddress(error);
  return withRetries(
    attemptNoting,
    retry,
    signal,
    func(WHERE, 'startupRetries.onRetry', given.onRetry),
    enough,
  );
}

/** Retries at startup of a gateway that refuses connections or whose name does not resolve. */
const REFUSED_RETRIES = 2;

function wrongAddress(error: GatewayError): boolean {
  const code = error.code === 'network_error' ? networkCodeOf(error.cause) : undefined;
  return code === 'ECONNREFUSED' || code === 'ENOTFOUND';
}

/** What {@link registerWebhook} (and `receiver.register()`) did. */
export interface RegisterWebhookResult {
  /** The webhook now delivering to `url`. */
  webhook: Webhook;
  /** Whether this call created it. */
  created: boolean;
  /** Ids of the older webhooks for `url` this call deleted. */
  deleted: number[];
}

/**
 * Makes sure exactly one active webhook delivers `events` to `url`: reuses a fitting one or creates
 * one, then the newest for the URL wins and older ones go, so instances started together end with
 * one. Other URLs are never touched. Start listening first: deliveries may come at once.
 */
export async function registerWebhook(
  client: WebhooksClient,
  options: RegisterWebhookOptions,
): Promise<RegisterWebhookResult> {
  refuseUnknownOptions(options, REGISTER_OPTIONS, WHERE, {
    onRetry: 'it belongs in `startupRetries: { onRetry }`',
    retries: 'did you mean `startupRetries`?',
  });
  func(WHERE, 'onWarning', options.onWarning);
  const events = options.events as unknown;
  const listed =
    Array.isArray(events) && events.length > 0 && events.every((type) => typeof type === 'string');
  checkOption(WHERE, 'events', events, listed, 'a non-empty list of event types');
  return await withStartupRetries(
    () => registerOnce(client, options),
    options.startupRetries,
    options.signal,
  );
}

async function registerOnce(
  client: WebhooksClient,
  options: RegisterWebhookOptions,
): Promise<RegisterWebhookResult> {
  const url = normaliseUrl(options.url);
  const events = [...new Set(options.events)];
  const request: RequestOptions = options.signal ? { signal: options.signal } : {};
  const fits = (webhook: Webhook) =>
    webhook.status === 'active' &&
    sameEvents(webhook.events, events) &&
    (options.apiKeyId === undefined || webhook.api_key_id === options.apiKeyId);
  const own = (webhooks: Webhook[]) => webhooks.filter((webhook) => sameUrl(webhook.url, url));

  const listed = await client.webhooks.list(request);
  const before = own(listed);
  let keep = options.rotateSecret ? undefined : newest(before.filter(fits));
  let created = false;
  if (!keep && mayBeIncomplete(listed)) warn(options, incompleteListWarning(url));
  if (!keep) {
    keep = await client.webhooks.create(
      {
        url: options.url,
        events,
        ...(options.secret !== undefined && { secret_key: options.secret }),
        ...(options.apiKeyId !== undefined && { api_key_id: options.apiKeyId }),
      },
      request,
    );
    created = true;
  }

  // Another instance may have created one meanwhile: the newest fitting one wins, even over ours.
  const after = created || before.length > 1 ? own(await client.webhooks.list(request)) : before;
  const winner = newest([keep, ...after.filter((webhook) => fits(webhook) && webhook.id > keep.id)])!;
  const deleted: number[] = [];
  for (const webhook of after) {
    if (webhook.id >= winner.id) continue;
    try {
      await client.webhooks.delete(webhook.id, request);
      deleted.push(webhook.id);
    } catch (error) {
      // Another instance converging at the same time may have deleted it first.
      if (!(error instanceof GatewayError && error.status === 404)) throw error;
    }
  }
  const fresh = after.find((webhook) => webhook.id === winner.id);
  return { webhook: fresh ?? winner, created: created && winner.id === keep.id, deleted };
}

function newest(webhooks: Webhook[]): Webhook | undefined {
  return webhooks.reduce<Webhook | undefined>(
    (best, webhook) => (!best || webhook.id > best.id ? webhook : best),
    undefined,
  );
}

function sameEvents(a: readonly string[] | undefined, b: readonly string[]): boolean {
  if (!Array.isArray(a)) return false;
  const set = new Set(a);
  return set.size === b.length && b.every((event) => set.has(event));
}

function normaliseUrl(url: string): string {
  return httpUrlOption(WHERE, 'url', url, 'https://app.example.com/webhooks').href;
}

function sameUrl(candidate: string, url: string): boolean {
  try {
    return new URL(candidate).href === url;
  } catch {
    return false;
  }
}

/** Names the URL without its query, which may hold a token. */
function incompleteListWarning(url: string): string {
  const { origin, pathname } = new URL(url);
  return (
    `jobhook: registering ${origin}${pathname}: the gateway's webhook list may have more pages than ` +
    'the client could read (its paging is not one jobhook recognises), and none for this URL was on ' +
    'what it read, so a webhook is created; if one already exists on a later page, there are now two ' +
    'and each delivery arrives twice (deduplicated by the receiver, but counted twice by the gateway). ' +
    'Check with `npx jobhook webhooks list` and delete the older one.'
  );
}

function warn(options: RegisterWebhookOptions, message: string): void {
  (options.onWarning ?? ((line: string) => console.warn(line)))(message);
}
