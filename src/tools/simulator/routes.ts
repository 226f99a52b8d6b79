// The gateway API's routes: what a handler is given, how it refuses (GatewayFailure), and how a
// request finds its route.
import type { Account, ApiKeyRecord, GatewayState } from './state.js';

/**
 * Thrown by a route to answer with the failure envelope. The document names the codes
 * `invalid_request`, `unauthorized` and `not_found`; the others are the simulator's choice
 * (docs/gateway-simulator.md).
 */
export class GatewayFailure extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly headers: Record<string, string> = {},
  ) {
    super(message);
  }
}

export const invalid = (message: string) => new GatewayFailure(400, 'invalid_request', message);
export const notFound = (message: string) => new GatewayFailure(404, 'not_found', message);

/** A route handler returns the `data` of the success envelope or throws a GatewayFailure. */
export interface RouteContext {
  state: GatewayState;
  account: Account;
  key: ApiKeyRecord;
  body: Record<string, unknown>;
  params: Record<string, string>;
  query: URLSearchParams;
}

export type RouteHandler = (context: RouteContext) => unknown;

export interface Route {
  method: 'GET' | 'POST' | 'DELETE';
  pattern: RegExp;
  handler: RouteHandler;
}

/** `/api/v1/webhooks/:id` becomes a pattern whose named groups are the parameters. */
export function route(method: Route['method'], path: string, handler: RouteHandler): Route {
  const source = path.replace(/:(\w+)/g, '(?<$1>[^/]+)');
  return { method, pattern: new RegExp(`^${source}$`), handler };
}

export type Match = { route: Route; params: Record<string, string> } | 'not_found' | 'method_not_allowed';

export function match(routes: readonly Route[], method: string, path: string): Match {
  let pathKnown = false;
  for (const candidate of routes) {
    const found = candidate.pattern.exec(path);
    if (!found) continue;
    pathKnown = true;
    if (candidate.method !== method) continue;
    const params: Record<string, string> = {};
    for (const [name, value] of Object.entries(found.groups ?? {})) params[name] = decoded(value);
    return { route: candidate, params };
  }
  return pathKnown ? 'method_not_allowed' : 'not_found';
}

function decoded(value: string): string {
  try {
    return decodeURIComponent(value);
  } catch {
    throw invalid(`The path has a malformed percent-escape: ${JSON.stringify(value.slice(0, 100))}.`);
  }
}
