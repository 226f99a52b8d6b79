// The webhook routes, and how the simulator pages a list.
import { isIP } from 'node:net';
import { GATEWAY_EVENT_TYPES as EVENT_TYPES } from 'jobhook';
import { canSignWith, isGatewayEventType, optionChecks, type DeliverySigning } from 'jobhook/extend';
import { invalid, notFound, type RouteContext } from './routes.js';
import { nowIso, type WebhookRecord } from './state.js';

const MAX_URL_LENGTH = 2048;

/** POST /api/v1/webhooks, for deliveries signed as `signing` says. */
export const postWebhook = (signing: DeliverySigning) => (context: RouteContext) =>
  createWebhook(context, signing);

function createWebhook({ state, account, key, body }: RouteContext, signing: DeliverySigning) {
  const url = webhookUrl(body.url);
  const events = eventList(body.events);
  const secret = body.secret_key;
  if (secret !== undefined && secret !== null) {
    if (typeof secret !== 'string' || secret.length === 0)
      throw invalid('secret_key must be a non-empty string.');
    // A secret the simulator could never sign with is refused now, not at each delivery.
    if (!canSignWith(signing, secret)) {
      const rule =
        signing.secretForm === 'base64'
          ? 'secret_key must be base64 (after "whsec_" when it starts with it).'
          : 'secret_key starts with "whsec_" but is not base64 after the prefix.';
      throw invalid(rule);
    }
  }
  const apiKeyId = body.api_key_id;
  if (apiKeyId !== undefined && apiKeyId !== null && apiKeyId !== key.id) {
    throw invalid('api_key_id must be the ID of the API key that authenticates this request.');
  }
  const at = nowIso();
  const record: WebhookRecord = {
    id: state.nextId('webhook'),
    account_id: account.id,
    url,
    events,
    status: 'active',
    api_key_id: apiKeyId === undefined || apiKeyId === null ? null : key.id,
    created_at: at,
    updated_at: at,
    secret_key: typeof secret === 'string' ? secret : undefined,
    total_sent: 0,
    total_failed: 0,
    last_sent_at: null,
    last_error: null,
  };
  state.webhooks.set(record.id, record);
  return publicWebhook(record);
}

/** GET /api/v1/webhooks: the only answer that carries the delivery counters; pages with `lists`. */
export function listWebhooks(paging: ListPaging | undefined) {
  return ({ state, account, query }: RouteContext) =>
    pageOf(
      [...state.webhooks.values()]
        .filter((webhook) => webhook.account_id === account.id)
        .map((webhook) => ({
          ...publicWebhook(webhook),
          total_sent: webhook.total_sent,
          total_failed: webhook.total_failed,
          last_sent_at: webhook.last_sent_at,
          last_error: webhook.last_error,
        })),
      query,
      paging,
    );
}

/** DELETE /api/v1/webhooks/{id}: another account's webhook is as absent as a missing one. */
export function deleteWebhook({ state, account, params }: RouteContext) {
  const id = /^\d{1,15}$/.test(params.id ?? '') ? Number(params.id) : NaN;
  const webhook = state.webhooks.get(id);
  if (!webhook || webhook.account_id !== account.id) throw notFound('Webhook not found.');
  state.webhooks.delete(id);
  return { id };
}

/** What a webhook looks like in a create answer: never the secret_key, never the counters. */
function publicWebhook(webhook: WebhookRecord) {
  const { id, url, events, status, api_key_id, created_at, updated_at } = webhook;
  return { id, url, events: [...events], status, api_key_id, created_at, updated_at };
}

/** HTTPS, or plain HTTP to a loopback host so that a receiver on the test machine can be reached. */
function webhookUrl(value: unknown): string {
  if (typeof value !== 'string' || value.length === 0 || value.length > MAX_URL_LENGTH) {
    throw invalid(`url must be a string of 1 to ${MAX_URL_LENGTH} characters.`);
  }
  // `localhost:3000/webhooks` parses, with the scheme `localhost:`: said as a missing scheme.
  const problem = optionChecks.httpUrlProblem(value);
  if (problem !== undefined)
    throw invalid(`url must be an absolute https:// URL (http:// for a loopback host); ${problem}.`);
  const url = new URL(value);
  if (url.username || url.password) throw invalid('url must not contain credentials.');
  if (url.protocol === 'https:') return value;
  if (url.protocol === 'http:' && isLoopback(url.hostname)) return value;
  throw invalid('url must use https (plain http is accepted only for loopback hosts).');
}

/** `localhost`, `*.localhost`, 127.0.0.0/8 or ::1. */
export function isLoopback(hostname: string): boolean {
  const host = hostname.replace(/^\[|\]$/g, '');
  if (host === 'localhost' || host.endsWith('.localhost')) return true;
  if (isIP(host) === 4) return host.startsWith('127.');
  return isIP(host) === 6 && (host === '::1' || host === '0:0:0:0:0:0:0:1');
}

function eventList(value: unknown): string[] {
  if (!Array.isArray(value) || value.length === 0) {
    throw invalid(`events must be a non-empty array of: ${EVENT_TYPES.join(', ')}.`);
  }
  for (const event of value) {
    if (typeof event !== 'string' || !isGatewayEventType(event)) {
      throw invalid(`Unknown event type ${JSON.stringify(event)}; supported: ${EVENT_TYPES.join(', ')}.`);
    }
  }
  if (new Set(value).size !== value.length) throw invalid('events must not repeat an event type.');
  return value as string[];
}

/**
 * How the simulator pages a list (docs/gateway-simulator.md shows each shape):
 * - `cursor`: `{ items, has_more, next_cursor }`; the next page is `?cursor=<next_cursor>`.
 * - `pages`: `{ items, page, per_page, total, total_pages }`; the next page is `?page=<n>`.
 * - `unmarked`: `{ items }`, the first page only, with nothing that tells more exist.
 */
export type ListStyle = 'cursor' | 'pages' | 'unmarked';

export interface ListPaging {
  pageSize: number;
  style: ListStyle;
}

/** The list answer for `items` (oldest first): an array without paging, else one page of them. */
function pageOf<T>(items: readonly T[], query: URLSearchParams, paging: ListPaging | undefined): unknown {
  if (!paging) return items;
  const { pageSize, style } = paging;
  if (style === 'pages') {
    const page = position(query.get('page') ?? '1', 'page', 1);
    const totalPages = Math.max(1, Math.ceil(items.length / pageSize));
    const start = (page - 1) * pageSize;
    return {
      items: items.slice(start, start + pageSize),
      page,
      per_page: pageSize,
      total: items.length,
      total_pages: totalPages,
    };
  }
  const cursor = query.get('cursor');
  // A cursor is opaque to clients: here `c<offset>`, refused when made up.
  const start =
    cursor === null ? 0 : position(/^c\d{1,9}$/.test(cursor) ? cursor.slice(1) : 'x', 'cursor', 0);
  const slice = items.slice(start, start + pageSize);
  if (style === 'unmarked') return { items: slice };
  const more = start + pageSize < items.length;
  return { items: slice, has_more: more, next_cursor: more ? `c${start + pageSize}` : null };
}

function position(value: string, name: string, min: number): number {
  const number = /^\d{1,9}$/.test(value) ? Number(value) : NaN;
  if (!(number >= min))
    throw invalid(`${name} is not a valid ${name === 'page' ? 'page number' : 'cursor'}.`);
  return number;
}
