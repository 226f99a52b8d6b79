import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { authenticate } from './auth.js';
import { GatewayFailure, invalid, requestId, sendFailure, sendSuccess } from './envelope.js';
import { match, type Route } from './routes.js';
import type { Account, ApiKeyRecord, GatewayState } from './state.js';

const MAX_BODY_BYTES = 64 * 1024;

/** A request the simulator answered, for tests that count what reached it. */
export interface RecordedRequest {
  method: string;
  path: string;
  status: number;
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
  intercept?(req: IncomingMessage, res: ServerResponse, path: string, host: string): boolean;
}

/**
 * Listens on `address` (default 127.0.0.1, a free port); only requests whose Host is that address
 * are served, unless it is a wildcard address, which is reachable by any name on purpose.
 */
export async function listen(
  hooks: ServerHooks,
  address: { host: string; port: number } = { host: '127.0.0.1', port: 0 },
): Promise<{ server: Server; host: string }> {
  let host = '';
  const any = WILDCARDS.has(address.host);
  const server = createServer((req, res) => {
    void handle(hooks, any ? undefined : host, req, res);
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(address.port, address.host, () => resolve());
  });
  const name = address.host.includes(':') ? `[${address.host}]` : address.host;
  host = `${name}:${(server.address() as AddressInfo).port}`;
  return { server, host };
}

const WILDCARDS = new Set(['0.0.0.0', '::']);

async function handle(
  hooks: ServerHooks,
  host: string | undefined,
  req: IncomingMessage,
  res: ServerResponse,
) {
  const id = requestId();
  const method = (req.method ?? 'GET').toUpperCase();
  const path = (req.url ?? '/').split('?')[0]!;
  // A wildcard address serves any Host: the console then checks against the one the request names.
  if (hooks.intercept?.(req, res, path, host ?? String(req.headers.host ?? ''))) return;
  res.on('finish', () => hooks.requests.push({ method, path, status: res.statusCode }));
  try {
    const data = await answer(hooks, host, req, method, path);
    sendSuccess(res, id, data);
  } catch (error) {
    if (error instanceof GatewayFailure) return sendFailure(res, id, error);
    // A bug in the simulator still answers with the envelope, like the real gateway's 500.
    sendFailure(res, id, new GatewayFailure(500, 'internal_error', 'Internal server error.'));
  }
}

async function answer(
  hooks: ServerHooks,
  host: string | undefined,
  req: IncomingMessage,
  method: string,
  path: string,
) {
  if (host !== undefined && req.headers.host !== host) {
    req.resume();
    throw new GatewayFailure(403, 'forbidden', 'This host is not the gateway host.');
  }
  const { key, account } = authenticate(hooks.state, req);
  hooks.beforeRoute(method, path, key, account);
  const found = match(hooks.routes, method, path);
  if (found === 'not_found') throw new GatewayFailure(404, 'not_found', `No endpoint at ${path}.`);
  if (found === 'method_not_allowed') {
    throw new GatewayFailure(405, 'method_not_allowed', `${method} is not allowed on ${path}.`);
  }
  const body = method === 'POST' ? await jsonBody(req) : (req.resume(), {});
  return found.route.handler({ state: hooks.state, account, key, body, params: found.params });
}

/** docs/gateway.md §4: request bodies are JSON objects sent with Content-Type: application/json. */
async function jsonBody(req: IncomingMessage): Promise<Record<string, unknown>> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > MAX_BODY_BYTES) throw invalid(`The body is larger than ${MAX_BODY_BYTES} bytes.`);
    chunks.push(chunk);
  }
  const type = req.headers['content-type'] ?? '';
  if (!/^application\/json\s*(;|$)/i.test(type)) throw invalid('Content-Type must be application/json.');
  let body: unknown;
  try {
    body = JSON.parse(Buffer.concat(chunks).toString('utf8'));
  } catch {
    throw invalid('The body is not valid JSON.');
  }
  if (typeof body !== 'object' || body === null || Array.isArray(body))
    throw invalid('The body must be a JSON object.');
  return body as Record<string, unknown>;
}
