import { invalidResponse, listingTooLarge } from './errors.js';

/**
 * The gateway document allows a list to be "an array of resources, or a paginated object that
 * contains `items`", with no paging parameters. The conventions followed (anything else, a
 * repeated cursor or more than {@link MAX_PAGES} pages reads as incomplete):
 * - an array: complete;
 * - `{ items, next_cursor }`: the next page is `?cursor=<next_cursor>`, the last has none;
 * - `{ items, next }`: the next page's URL (same origin and path only: the key goes nowhere else);
 * - `{ items, page, total_pages }`: the next page is `?page=<page + 1>`;
 * - `{ items, has_more: false }`, or a `total` equal to the items read: complete.
 */
const MAX_PAGES = 100;

/** Far more webhooks than an account has, far less than a heap holds. */
const MAX_LIST_ITEMS = 10_000;

/** Reads every page, `get(query)` fetching `path + query` ('' for the first); `complete` when sure. */
export async function readPages<T>(
  get: (query: string) => Promise<unknown>,
  path: string,
  baseUrl: string,
): Promise<{ items: T[]; complete: boolean }> {
  const items: T[] = [];
  const seen = new Set<string>();
  let query = '';
  // One by one: a page of millions spread into push() overflows the stack.
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

/** Lists the client could not tell were complete: registerWebhook warns before it creates. */
const incomplete = new WeakSet<object>();

export function markIncomplete<T extends object>(list: T): T {
  incomplete.add(list);
  return list;
}

export function mayBeIncomplete(list: object): boolean {
  return incomplete.has(list);
}
