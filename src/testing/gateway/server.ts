import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { collectNodeStream, declaredLength, limitsWithin } from '../../wire/collect-stream.js';
import { BodyReadError } from '../../wire/body.js';
import { authenticate, authorize } from './auth.js';
import { GatewayFailure, invalid, requestId, sendFailure, sendSuccess } from './envelope.js';
import { hostGuard, type HostGuard } from './host-guard.js';
import { match, type Route } from './routes.js';
import type { Account, ApiKeyRecord, GatewayState } from './state.js';

const MAX_BODY_BYTES = 64 * 1024;
const BODY_TIMEOUT_MS = 10_000;

/** A request the simulator answered, for tests that count what reached it. */
export interface RecordedRequest {
  method: string;
  path: string;
  status: number;
}

/** Whether a request named a Host the simulator serves, and what to tell it when not. */
export interface HostAccess {
  /** The request's Host header when it is one the simulator serves; undefined when refused. */
  host: string | undefined;
  /** The 403 message for a refused Host: it names the host to use. */
  refusal: string;
}

export interface ServerHooks {
  state: GatewayState;
  routes: readonly Route[];
  /** Runs after authentication: rate limits and injected failures throw from here. */
  beforeRoute(method: string, path: string, key: ApiKeyRecord, account: Account): void;
  requests: RecordedRequest[];
  /**
   * Answers a request outside the gateway API itself (the console under `/_console`) and returns
   * true, or returns false to leave it to the API. Such requests are not in `requests`.
   */
  intercept?(req: IncomingMessage, res: ServerResponse, path: string, access: HostAccess): boolean;
}

/**
 * Listens on `address` (default 127.0.0.1, a free port); only requests whose Host the guard
 * accepts are served (host-guard.ts).
 */
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
 * One API operation for an authenticated key, through every check after authentication: approval,
 * rate limit and injected failures, route (404/405), body (400), then the operation. The console
 * calls it too, so that what it does is what the API would do.
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

/**
 * docs/gateway.md §4: request bodies are JSON objects sent with Content-Type: application/json.
 * Read with the Node collector within MAX_BODY_BYTES (413) and BODY_TIMEOUT_MS (408); a body left
 * unread closes the connection after the answer.
 */
async function jsonBody(req: IncomingMessage): Promise<Record<string, unknown>> {
  const limits = limitsWithin(MAX_BODY_BYTES, BODY_TIMEOUT_MS);
  let bytes: Uint8Array;
  try {
    bytes = await collectNodeStream(req, limits, declaredLength(req.headers['content-length']));
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
