import { invalid } from './envelope.js';

/**
 * How the simulator answers a list (docs/gateway.md §2.1 allows "an array of resources, or a
 * paginated object that contains `items`", and shows no paging parameters). Each style is one
 * convention a real gateway may follow; docs/gateway-simulator.md shows each shape.
 *
 * - `cursor`: `{ items, has_more, next_cursor }`; the next page is `?cursor=<next_cursor>`.
 * - `pages`: `{ items, page, per_page, total, total_pages }`; the next page is `?page=<n>`.
 * - `unmarked`: `{ items }` holding the first page only, with nothing that tells more exist: a
 *   gateway whose paging a client cannot follow.
 */
export type ListStyle = 'cursor' | 'pages' | 'unmarked';

export interface ListPaging {
  pageSize: number;
  style: ListStyle;
}

/** The list answer for `items` (oldest first), as an array without paging, else one page of them. */
export function pageOf<T>(
  items: readonly T[],
  query: URLSearchParams,
  paging: ListPaging | undefined,
): unknown {
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
