import { invalidResponse, listingTooLarge } from './errors.js';

/**
 * docs/gateway.md §2.1: a list endpoint answers "an array of resources, or a paginated object that
 * contains `items`", and shows no paging parameters. The client follows the conventions it can
 * recognise, and says when it cannot tell whether it has read everything:
 *
 * - an array: complete;
 * - `{ items, next_cursor }` (with or without `has_more`): the next page is `?cursor=<next_cursor>`,
 *   complete at a `null` or absent cursor;
 * - `{ items, next }`: `next` is the next page's URL (same origin as `baseUrl` only, so the key is
 *   never sent elsewhere), complete at `null`;
 * - `{ items, page, total_pages }`: the next page is `?page=<page + 1>`, complete at the last;
 * - `{ items, has_more: false }`, or a `total` equal to the items read: complete;
 * - anything else (`{ items }` alone, an unknown `more` flag): incomplete, as far as the client
 *   can tell. So is a list past {@link MAX_PAGES} pages, or one whose cursor repeats.
 *
 * What one listing holds is bounded whatever the gateway sends: at most {@link MAX_LIST_ITEMS}
 * items, and pages of at most `maxResponseBytes` in all (the transport counts them); past either
 * the listing fails with `listing_too_large`.
 */
export const MAX_PAGES = 100;

/** The most items one listing keeps: far more webhooks than an account has, far less than a heap holds. */
export const MAX_LIST_ITEMS = 10_000;

export interface ListRead<T> {
  items: T[];
  /** False when the client could not tell that it read every page. */
  complete: boolean;
}

/** `get(query)` fetches `path + query` (query '' for the first page). */
export async function readPages<T>(
  get: (query: string) => Promise<unknown>,
  path: string,
  baseUrl: string,
): Promise<ListRead<T>> {
  const items: T[] = [];
  const seen = new Set<string>();
  let query = '';
  /** Appends a page's items, one by one: a page of millions spread into push() overflows the stack. */
  const keep = (page: readonly T[]) => {
    if (items.length + page.length > MAX_LIST_ITEMS) {
      throw listingTooLarge(`GET ${path}`, 200, `the listing holds more than ${MAX_LIST_ITEMS} items`);
    }
    for (const item of page) items.push(item);
  };
  for (let page = 1; page <= MAX_PAGES; page++) {
    const data = await get(query);
    if (Array.isArray(data)) {
      keep(data as T[]);
      return { items, complete: page === 1 };
    }
    if (typeof data !== 'object' || data === null || !Array.isArray((data as { items?: unknown }).items)) {
      throw invalidResponse(`GET ${path}`, 'the answer holds neither an array nor items');
    }
    const answer = data as Record<string, unknown> & { items: T[] };
    keep(answer.items);
    const next = nextQuery(answer, path, baseUrl);
    if (next === 'done') return { items, complete: true };
    if (next === 'unknown' || seen.has(next.query) || answer.items.length === 0) {
      return { items, complete: total(answer) === items.length };
    }
    seen.add(next.query);
    query = next.query;
  }
  return { items, complete: false };
}

/** The query of the next page, `done` on the last page, or `unknown` when the shape says nothing. */
function nextQuery(
  answer: Record<string, unknown>,
  path: string,
  baseUrl: string,
): { query: string } | 'done' | 'unknown' {
  if ('next_cursor' in answer) {
    const cursor = answer.next_cursor;
    if (typeof cursor === 'string' && cursor !== '')
      return { query: `?cursor=${encodeURIComponent(cursor)}` };
    if (cursor === null || cursor === undefined) return answer.has_more === true ? 'unknown' : 'done';
    return 'unknown';
  }
  if ('next' in answer) {
    if (answer.next === null) return 'done';
    if (typeof answer.next !== 'string') return 'unknown';
    // Only a page of the same list on the same gateway: the API key must never go elsewhere.
    let url: URL;
    try {
      url = new URL(answer.next, `${baseUrl}${path}`);
    } catch {
      return 'unknown';
    }
    const prefix = `${baseUrl}${path}?`;
    return url.href.startsWith(prefix) ? { query: url.href.slice(prefix.length - 1) } : 'unknown';
  }
  const { page, total_pages: pages } = answer;
  if (typeof page === 'number' && typeof pages === 'number' && Number.isInteger(page)) {
    return page >= pages ? 'done' : { query: `?page=${page + 1}` };
  }
  if (answer.has_more === false) return 'done';
  return 'unknown';
}

function total(answer: Record<string, unknown>): number | undefined {
  return typeof answer.total === 'number' ? answer.total : undefined;
}

/** Lists the client could not tell were complete: {@link registerWebhook} warns before it creates. */
const incomplete = new WeakSet<object>();

export function markIncomplete<T extends object>(list: T): T {
  incomplete.add(list);
  return list;
}

/** True for a list the client returned without being able to tell that it holds every page. */
export function mayBeIncomplete(list: object): boolean {
  return incomplete.has(list);
}
