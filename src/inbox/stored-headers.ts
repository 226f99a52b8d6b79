import type { HeadersInput } from '../wire/headers.js';

/** Credentials of other systems that may ride on a request: an inbox never keeps them. */
const NOT_KEPT = new Set(['authorization', 'proxy-authorization', 'cookie', 'set-cookie', 'x-api-key']);

/**
 * A request's headers as an inbox keeps them: names lowercase, repeated ones joined as the
 * receiver reads them (with a space), so that the signature verifies again on replay.
 */
export function storedHeaders(input: HeadersInput): Record<string, string> {
  const kept: Record<string, string> = {};
  if (typeof (input as Headers).forEach === 'function' && typeof (input as Headers).get === 'function') {
    (input as Headers).forEach((value, name) => {
      if (!NOT_KEPT.has(name)) kept[name] = value;
    });
    return kept;
  }
  for (const [key, value] of Object.entries(input as Record<string, unknown>)) {
    const name = key.toLowerCase();
    if (NOT_KEPT.has(name)) continue;
    if (Array.isArray(value)) kept[name] = value.join(' ');
    else if (typeof value === 'string') kept[name] = value;
    else if (typeof value === 'number') kept[name] = String(value);
  }
  return kept;
}
