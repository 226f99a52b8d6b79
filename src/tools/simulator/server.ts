// The simulator's HTTP side: the guard on Host, authentication, the route, the body, the envelope.
import { randomBytes } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { isIP, type AddressInfo } from 'node:net';
import { hostname } from 'node:os';
import { BodyReadError, limitsWithin, readRequestBody } from 'jobhook/extend';
import { authenticate, authorize } from './accounts.js';
import { GatewayFailure, invalid, match, type Route } from './routes.js';
import type { Account, ApiKeyRecord, GatewayState } from './state.js';
import { isLoopback } from './webhooks.js';

const MAX_BODY_BYTES = 64 * 1024;
const BODY_TIMEOUT_MS = 10_000;

/** A request the simulator answered, for tests that count what reached it. */
export interface RecordedRequest {
  method: string;
  path: string;
  status: number;
}

/** The request's Host when the simulator serves it, else the 403 message, which names the host to use. */
export interface HostAccess {
  host: string | undefined;
  refusal: string;
}

export interface ServerHooks {
  state: GatewayState;
  routes: readonly Route[];
  /** Rate limits and injected failures throw from here, after authentication. */
  beforeRoute(method: string, path: string, key: ApiKeyRecord, account: Account): void;
  requests: RecordedRequest[];
  /** Answers a request outside the API (the console) and returns true; not recorded in `requests`. */
  intercept?(req: IncomingMessage, res: ServerResponse, path: string, access: HostAccess): boolean;
}

/** Listens on `address` (default 127.0.0.1, a free port), serving only the Hosts the guard accepts. */
export async function listen(
  hooks: ServerHooks,
  address: { host: string; port: number; allowedHosts?: readonly string[] } = { host: '127.0.0.1', port: 0 },
): Promise<{ server: Server; host: string; guard: HostGuard }> {
  // The guard needs the port, known once listening; no request arrives before that.
  const ready: { guard?: HostGuard } = {};
  const server = createServer((req, res) => {
    void handle(hooks, ready.guard!, req, res);
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(address.port, address.host, () => resolve());
  });
  const port = (server.address() as AddressInfo).port;
  const guard = (ready.guard = hostGuard({ host: address.host, port }, address.allowedHosts));
  const name = address.host.includes(':') ? `[${address.host}]` : address.host;
  return { server, host: `${name}:${port}`, guard };
}

async function handle(hooks: ServerHooks, guard: HostGuard, req: IncomingMessage, res: ServerResponse) {
  const id = requestId();
  const method = (req.method ?? 'GET').toUpperCase();
  const [path = '/', search = ''] = (req.url ?? '/').split('?', 2);
  const header = req.headers.host;
  const access = { host: guard.accepts(header) ? header : undefined, refusal: guard.refusal(header) };
  if (hooks.intercept?.(req, res, path, access)) return;
  res.on('finish', () => hooks.requests.push({ method, path, status: res.statusCode }));
  try {
    if (access.host === undefined) {
      req.resume();
      throw new GatewayFailure(403, 'forbidden', access.refusal);
    }
    const { key, account } = authenticate(hooks.state, req);
    const query = new URLSearchParams(search);
    const data = await callRoute(hooks, { method, path, query, key, account, body: () => jsonBody(req) });
    sendSuccess(res, id, data);
  } catch (error) {
    if (error instanceof GatewayFailure) return sendFailure(res, id, error);
    // A bug in the simulator still answers with the envelope, like the real gateway's 500.
    sendFailure(res, id, new GatewayFailure(500, 'internal_error', 'Internal server error.'));
  }
}

/**
 * One API operation for an authenticated key, through every later check: approval, rate limit and
 * injected failures, route (404/405), body (400). The console calls it too, to act as the API would.
 */
export async function callRoute(
  hooks: Pick<ServerHooks, 'state' | 'routes' | 'beforeRoute'>,
  call: {
    method: string;
    path: string;
    query?: URLSearchParams;
    key: ApiKeyRecord;
    account: Account;
    body: () => Promise<Record<string, unknown>>;
  },
): Promise<unknown> {
  const { method, path, key, account } = call;
  authorize(account);
  hooks.beforeRoute(method, path, key, account);
  const found = match(hooks.routes, method, path);
  if (found === 'not_found') throw new GatewayFailure(404, 'not_found', `No endpoint at ${path}.`);
  if (found === 'method_not_allowed') {
    throw new GatewayFailure(405, 'method_not_allowed', `${method} is not allowed on ${path}.`);
  }
  const body = method === 'POST' ? await call.body() : {};
  const query = call.query ?? new URLSearchParams();
  return found.route.handler({ state: hooks.state, account, key, body, params: found.params, query });
}

/** A JSON object (docs/gateway.md §4), within MAX_BODY_BYTES (413) and BODY_TIMEOUT_MS (408). */
async function jsonBody(req: IncomingMessage): Promise<Record<string, unknown>> {
  const limits = limitsWithin(MAX_BODY_BYTES, BODY_TIMEOUT_MS);
  let bytes: Uint8Array;
  try {
    bytes = await readRequestBody(req, limits);
  } catch (error) {
    const close = { connection: 'close' };
    if (error instanceof BodyReadError && error.reason === 'too_large') {
      throw new GatewayFailure(
        413,
        'payload_too_large',
        `The body is larger than ${MAX_BODY_BYTES} bytes.`,
        close,
      );
    }
    if (limits.signal?.aborted) {
      throw new GatewayFailure(
        408,
        'request_timeout',
        `The body did not arrive within ${BODY_TIMEOUT_MS} ms.`,
        close,
      );
    }
    throw new GatewayFailure(400, 'invalid_request', 'The body could not be read to its end.', close);
  }
  const type = req.headers['content-type'] ?? '';
  if (!/^application\/json\s*(;|$)/i.test(type)) throw invalid('Content-Type must be application/json.');
  let body: unknown;
  try {
    body = JSON.parse(new TextDecoder().decode(bytes));
  } catch {
    throw invalid('The body is not valid JSON.');
  }
  if (typeof body !== 'object' || body === null || Array.isArray(body))
    throw invalid('The body must be a JSON object.');
  return body as Record<string, unknown>;
}

function requestId(): string {
  return `req_${randomBytes(12).toString('hex')}`;
}

/** Every answer carries `success` and `request_id` (docs/gateway.md §2.1). */
function sendSuccess(res: ServerResponse, id: string, data: unknown): void {
  send(res, 200, { success: true, data, request_id: id }, id);
}

function sendFailure(res: ServerResponse, id: string, failure: GatewayFailure): void {
  send(
    res,
    failure.status,
    { success: false, error: { code: failure.code, message: failure.message }, request_id: id },
    id,
    failure.headers,
  );
}

function send(
  res: ServerResponse,
  status: number,
  body: unknown,
  id: string,
  headers: Record<string, string> = {},
) {
  const text = JSON.stringify(body);
  res.writeHead(status, {
    'content-type': 'application/json; charset=utf-8',
    'content-length': Buffer.byteLength(text),
    'x-request-id': id,
    ...headers,
  });
  res.end(text);
}

/**
 * Which Host headers the simulator serves, its guard against DNS rebinding: a page on a name made
 * to resolve to 127.0.0.1 has the browser send its own name as Host, so serving only names no
 * attacker controls is safe. Served: on a loopback address, any loopback name of the port; on
 * another, that address; on a wildcard (`0.0.0.0`, `::`), any IP literal and this machine's name;
 * everywhere, `allowedHosts`.
 */
function hostGuard(bound: { host: string; port: number }, allowedHosts: readonly string[] = []) {
  const address = bound.host.replace(/^\[|\]$/g, '').toLowerCase();
  const wildcard = address === '0.0.0.0' || address === '::';
  const loopback = wildcard || isLoopback(address);
  const allowed = new Set(allowedHosts.map((host) => host.toLowerCase()));
  const machine = hostname().toLowerCase();
  const display = address.includes(':') ? `[${address}]` : address;
  const suggestion = loopback ? `127.0.0.1:${bound.port}` : `${display}:${bound.port}`;

  function accepts(header: string | undefined): boolean {
    if (header === undefined) return false;
    const value = header.toLowerCase();
    if (allowed.has(value)) return true;
    const parsed = /^(\[[0-9a-f:.]+\]|[^:[\]]+):(\d{1,5})$/.exec(value);
    if (!parsed || Number(parsed[2]) !== bound.port) return false;
    const name = parsed[1]!.replace(/^\[|\]$/g, '');
    if (allowed.has(name)) return true;
    if (name === address) return true;
    if (loopback && isLoopback(name)) return true;
    return wildcard && (isIP(name) !== 0 || name === machine);
  }

  return {
    accepts,
    /** The Host to use, as the refusal names it. */
    suggestion,
    refusal(header: string | undefined): string {
      const seen = header === undefined ? 'no Host header' : `Host ${JSON.stringify(header.slice(0, 100))}`;
      return (
        `This host is not the gateway host (${seen}): use ${suggestion}` +
        (loopback ? ` or localhost:${bound.port}.` : '.')
      );
    },
  };
}

type HostGuard = ReturnType<typeof hostGuard>;
