/** Redirect statuses the fetch standard follows. */
const REDIRECTS = new Set([301, 302, 303, 307, 308]);

/** Same-origin redirects followed before giving up, as a loop guard. */
export const MAX_REDIRECTS = 5;

/** Why a redirect was not followed; the caller turns it into a GatewayRedirectError. */
export interface RefusedRedirect {
  status: number;
  reason: string;
}

/**
 * fetch with `redirect: 'manual'`, following only redirects that stay on the origin of `url`:
 * the request carries the API key (and maybe a webhook's secret_key in its body), which must never
 * reach another scheme, host or port. Same-origin hops behave as fetch would (307/308 keep the
 * method and body; 303, and 301/302 after a POST, continue as a GET without a body).
 */
export async function fetchSameOrigin(
  fetchImpl: typeof fetch,
  url: string,
  init: RequestInit & { method: string; headers: Record<string, string> },
): Promise<{ response: Response } | { refused: RefusedRedirect }> {
  let current = new URL(url);
  let { method, body, headers } = init;
  for (let hop = 0; ; hop++) {
    const response = await fetchImpl(current.href, { ...init, method, body, headers, redirect: 'manual' });
    // Browsers and some runtimes hide a manual redirect's target: it cannot be checked, so not followed.
    if (response.type === 'opaqueredirect') {
      return refusedRedirect(response, 'redirected somewhere this runtime does not reveal');
    }
    const location = REDIRECTS.has(response.status) ? response.headers.get('location') : null;
    if (location === null) return { response };
    await response.body?.cancel().catch(() => undefined);
    let next: URL;
    try {
      next = new URL(location, current);
    } catch {
      return refusedRedirect(response, 'redirected to an address that is not a URL');
    }
    if (next.origin !== current.origin) {
      return refusedRedirect(response, `redirected to another origin (${next.origin})`);
    }
    if (hop >= MAX_REDIRECTS) {
      return refusedRedirect(response, `redirected more than ${MAX_REDIRECTS} times`);
    }
    if (
      (response.status === 303 && method !== 'HEAD') ||
      ([301, 302].includes(response.status) && method === 'POST')
    ) {
      method = 'GET';
      body = undefined;
      headers = Object.fromEntries(Object.entries(headers).filter(([name]) => name !== 'content-type'));
    }
    current = next;
  }
}

function refusedRedirect(response: Response, reason: string): { refused: RefusedRedirect } {
  return { refused: { status: response.status, reason } };
}
