import { GatewayError } from './errors.js';
import {
  checkOption,
  func,
  invalidOption,
  optionNames,
  refuseUnknownOptions,
  wholeNumber,
} from '../common/errors.js';
import type { RequestOptions } from './request.js';
import { resolveRetry, withRetries, type RetryOptions } from './retry.js';
import { mayBeIncomplete } from './pages.js';

import type { CreateWebhookInput, Webhook } from './types.js';

/** What registration needs of a client (a `GatewayClient` has it): its webhooks' list, create and delete. */
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
  /**
   * Create a new webhook with `secret` even if one with the same URL and events exists, then delete
   * the old one. The gateway never shows a webhook's secret, so a changed secret cannot be detected:
   * set this for the deploy that rotates, with the receiver accepting both secrets meanwhile.
   */
  rotateSecret?: boolean;
  /**
   * Retries of the whole registration while the gateway is unreachable or answers 429/5xx, for
   * an app that starts before the gateway answers. Default 6, backing off from 0.5 s to 10 s with
   * jitter (about 25 s at most); `false` or 0 for none. Other failures (401, 400) reject at once.
   */
  startupRetries?: number | false | StartupRetryOptions;
  signal?: AbortSignal;
  /**
   * Told when the gateway's list of webhooks could not be read to its end (paging the client does
   * not recognise) and none for `url` was on what was read: the webhook is then created, and may
   * duplicate one on a page the client could not reach. Default `console.warn`.
   */
  onWarning?: (message: string) => void;
}

/**
 * How `registerWebhook` retries the whole registration while the gateway is unreachable or answers
 * 429 or 5xx, as it may while an app and the gateway start together. Each retry lists again
 * before it creates, so a retried registration still converges on one webhook.
 */
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

/** How the function is named in its messages: `client.webhooks.register` or `registerWebhook`. */
const WHERE = 'register';

/** Six retries, backing off from 0.5 s to at most 10 s with jitter: about 25 s at the longest. */
export const DEFAULT_STARTUP_RETRIES = { limit: 6, baseDelayMs: 500, maxDelayMs: 10_000 } as const;

/** Runs `attempt`, again after a backoff while it fails in a way the gateway may recover from. */
export async function withStartupRetries<T>(
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
  // A number is the limit: checked under the name it was given as.
  if (typeof option === 'number') wholeNumber(WHERE, 'startupRetries', option, 0, { min: 0 });
  const given =
    option === false ? { limit: 0 } : typeof option === 'number' ? { limit: option } : (option ?? {});
  const { onRetry: _onRetry, ...retryOptions } = given;
  const retry = resolveRetry({ ...DEFAULT_STARTUP_RETRIES, ...retryOptions }, WHERE, 'startupRetries');
  return withRetries(attempt, retry, signal, func(WHERE, 'startupRetries.onRetry', given.onRetry));
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
 * Makes sure exactly one active webhook delivers `events` to `url`.
 *
 * Reuses an active webhook with the same URL and events, else creates one. Then it converges on
 * one rule every instance applies the same way: the newest (highest id) webhook for the URL wins
 * and every older one for that URL is deleted. So a restart reuses, instances that start together
 * and each create one end with one, and a changed event list or a rotation creates the new webhook
 * before the old one goes, so no delivery finds none. Webhooks for other URLs are never touched.
 * While the gateway is unreachable or answers 429/5xx, the whole registration is retried with
 * backoff (`startupRetries`); each retry lists again first, so it still ends with one webhook.
 * Start listening before calling this: deliveries may arrive as soon as it resolves.
 */
export async function registerWebhook(
  client: WebhooksClient,
  options: RegisterWebhookOptions,
): Promise<RegisterWebhookResult> {
  refuseUnknownOptions(options, REGISTER_OPTIONS, WHERE, {
    onRetry: 'it belongs in `startupRetries: { onRetry }`',
    retries: 'did you mean `startupRetries`?',
  });
  // Checked before the first request, rather than when the first warning comes.
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

  // Converge: another instance may have created one meanwhile. Whichever fitting webhook is
  // newest wins; everything older for this URL goes, including what this call just created.
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
  try {
    return new URL(url).href;
  } catch {
    throw invalidOption(WHERE, 'url', 'the absolute URL of your receiver', url);
  }
}

function sameUrl(candidate: string, url: string): boolean {
  try {
    return new URL(candidate).href === url;
  } catch {
    return false;
  }
}

/** Names the risk, and the URL without its query (which may hold a token of the user's). */
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
