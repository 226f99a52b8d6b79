import { randomBytes } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { GatewayFailure } from '../routes.js';
import type { HostAccess } from '../server.js';
import type { ApiKeyRecord, ChangeSignal } from '../state.js';
import { allow, consoleAction, ConsoleFailure, type ConsoleOperations } from './actions.js';
import { liveFeed } from './live.js';
import { CONSOLE_PAGE, CONSOLE_PAGE_POLICY } from './page.js';

/** Everything under this path is the console's; the gateway API stays under `/api/v1`. */
export const CONSOLE_PATH = '/_console';

export interface ConsoleDependencies extends ConsoleOperations {
  changes: ChangeSignal;
  /** The console's data for the account of `key`, and no other. */
  snapshot: (key: ApiKeyRecord) => unknown;
  /** The key the console acts with when the page was not opened with one. */
  mainKey: ApiKeyRecord;
  /** The record of a plaintext API key, or undefined for an unknown one. */
  keyFor(apiKey: string): ApiKeyRecord | undefined;
  heartbeatMs: number;
}

/**
 * The console's HTTP side: the page, its data at `/state` (JSON) and `/events` (server-sent
 * events), and its actions. It shows one account: the main one, or the one whose key opened the
 * page (`/_console?api_key=<key>`, kept in a session cookie). The Host guard applies here too.
 */
export function consoleHandler(dependencies: ConsoleDependencies) {
  const feed = liveFeed({ changes: dependencies.changes, heartbeatMs: dependencies.heartbeatMs });
  const sessions = consoleSessions();

  /** True when `path` is the console's (answered here), false to leave it to the API. */
  function handle(req: IncomingMessage, res: ServerResponse, path: string, access: HostAccess): boolean {
    if (path !== CONSOLE_PATH && !path.startsWith(`${CONSOLE_PATH}/`)) return false;
    answer(req, res, path, access).catch((error: unknown) => {
      const failure =
        error instanceof ConsoleFailure
          ? error
          : error instanceof GatewayFailure
            ? new ConsoleFailure(error.status, error.code, error.message)
            : new ConsoleFailure(500, 'internal_error', 'The console failed to answer.');
      if (!req.complete) req.resume();
      if (res.headersSent) return void res.destroy();
      json(res, failure.status, { error: { code: failure.code, message: failure.message } });
    });
    return true;
  }

  async function answer(req: IncomingMessage, res: ServerResponse, path: string, access: HostAccess) {
    const host = access.host;
    if (host === undefined) throw new ConsoleFailure(403, 'forbidden', access.refusal);
    const method = (req.method ?? 'GET').toUpperCase();
    const route = path.slice(CONSOLE_PATH.length);
    const key = sessions.keyOf(req) ?? dependencies.mainKey;
    if (route === '' || route === '/') {
      allow(method, 'GET');
      req.resume();
      const opened = new URL(req.url ?? '/', 'http://console').searchParams.get('api_key');
      if (opened !== null) return openWith(res, opened);
      res.writeHead(200, {
        'content-type': 'text/html; charset=utf-8',
        'content-security-policy': CONSOLE_PAGE_POLICY,
        ...COMMON_HEADERS,
      });
      return void res.end(CONSOLE_PAGE);
    }
    if (route === '/state') {
      allow(method, 'GET');
      req.resume();
      return json(res, 200, dependencies.snapshot(key));
    }
    if (route === '/events') {
      allow(method, 'GET');
      req.resume();
      return feed.open(res, () => dependencies.snapshot(key));
    }
    const result = await consoleAction(dependencies, req, route, host, key);
    if (result === undefined) throw new ConsoleFailure(404, 'not_found', `No console endpoint at ${path}.`);
    return json(res, 200, result);
  }

  /** `/_console?api_key=<key>`: the page acts as that key's account from now on, in this browser. */
  function openWith(res: ServerResponse, apiKey: string) {
    const key = dependencies.keyFor(apiKey);
    if (!key) throw new ConsoleFailure(401, 'unauthorized', 'The API key is invalid.');
    // The key leaves the address bar at once; the cookie names a session, not the key.
    res.writeHead(303, {
      location: CONSOLE_PATH,
      'set-cookie': sessions.open(key, CONSOLE_PATH),
      ...COMMON_HEADERS,
    });
    res.end();
  }

  return {
    handle,
    get streams(): number {
      return feed.clients;
    },
    /** Ends every event stream; the simulator closes its server after this. */
    close: () => feed.close(),
  };
}

export type ConsoleHandler = ReturnType<typeof consoleHandler>;

const COMMON_HEADERS = {
  'cache-control': 'no-store',
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'no-referrer',
  'x-frame-options': 'DENY',
};

function json(res: ServerResponse, status: number, data: unknown): void {
  res.writeHead(status, { 'content-type': 'application/json; charset=utf-8', ...COMMON_HEADERS });
  res.end(JSON.stringify(data));
}

/** Sessions at most; the oldest goes first. A simulator serves one developer, not a crowd. */
const MAX_SESSIONS = 1000;

/**
 * Which key the console acts with, per browser. The cookie's name is unique to this simulator
 * (cookies ignore ports), HttpOnly and SameSite=Strict (no other site's page sends it).
 */
function consoleSessions() {
  const cookieName = `jobhook_console_${randomBytes(4).toString('hex')}`;
  const sessions = new Map<string, ApiKeyRecord>();
  return {
    /** Starts a session for `key`; answers the Set-Cookie header value. */
    open(key: ApiKeyRecord, path: string): string {
      const token = randomBytes(24).toString('base64url');
      sessions.set(token, key);
      if (sessions.size > MAX_SESSIONS) sessions.delete(sessions.keys().next().value!);
      return `${cookieName}=${token}; Path=${path}; HttpOnly; SameSite=Strict`;
    },
    keyOf(req: IncomingMessage): ApiKeyRecord | undefined {
      for (const part of (req.headers.cookie ?? '').split(';')) {
        const [name, value] = part.trim().split('=', 2);
        if (name === cookieName && value !== undefined) return sessions.get(value);
      }
      return undefined;
    },
  };
}
