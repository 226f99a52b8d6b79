import type { IncomingMessage, ServerResponse } from 'node:http';
import type { ChangeSignal } from '../changes.js';
import type { JobOutcome } from '../config.js';
import { GatewayFailure } from '../envelope.js';
import { liveFeed } from './live.js';
import { CONSOLE_PAGE, CONSOLE_PAGE_POLICY } from './page.js';

/** Everything under this path is the console's; the gateway API stays under `/api/v1`. */
export const CONSOLE_PATH = '/_console';
const MAX_BODY_BYTES = 16 * 1024;

export interface ConsoleDependencies {
  changes: ChangeSignal;
  snapshot: () => unknown;
  /** Submits a job for the simulator's main account; throws a GatewayFailure when refused. */
  submit(prompt: string, outcome: JobOutcome): { task_id: string };
  /** Sends a delivery again (same `webhook-id`, new attempts); throws when it cannot. */
  redeliver(deliveryId: string): { number: number };
  heartbeatMs: number;
}

class ConsoleFailure extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
  ) {
    super(message);
  }
}

/**
 * The console's HTTP side: the page at `/_console`, its data at `/_console/state` (JSON) and
 * `/_console/events` (server-sent events), and its two actions. Requests must carry the gateway's
 * own Host (no DNS rebinding); the actions also need a JSON body and, when the browser sends one,
 * the gateway's own Origin, so that no other web page can submit jobs or redeliveries.
 */
export function consoleHandler(dependencies: ConsoleDependencies) {
  const feed = liveFeed({
    changes: dependencies.changes,
    snapshot: dependencies.snapshot,
    heartbeatMs: dependencies.heartbeatMs,
  });

  /** True when `path` is the console's (answered here), false to leave it to the gateway API. */
  function handle(req: IncomingMessage, res: ServerResponse, path: string, host: string): boolean {
    if (path !== CONSOLE_PATH && !path.startsWith(`${CONSOLE_PATH}/`)) return false;
    answer(req, res, path, host).catch((error: unknown) => {
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

  async function answer(req: IncomingMessage, res: ServerResponse, path: string, host: string) {
    if (req.headers.host !== host)
      throw new ConsoleFailure(403, 'forbidden', 'This host is not the gateway host.');
    const method = (req.method ?? 'GET').toUpperCase();
    const route = path.slice(CONSOLE_PATH.length);
    if (route === '' || route === '/') {
      allow(method, 'GET');
      req.resume();
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
      return json(res, 200, dependencies.snapshot());
    }
    if (route === '/events') {
      allow(method, 'GET');
      req.resume();
      return feed.open(res);
    }
    if (route === '/jobs') {
      allow(method, 'POST');
      const body = await actionBody(req, host);
      const prompt = body.prompt;
      if (typeof prompt !== 'string')
        throw new ConsoleFailure(400, 'invalid_request', 'prompt must be a string.');
      const outcome = body.outcome ?? 'completed';
      if (outcome !== 'completed' && outcome !== 'failed') {
        throw new ConsoleFailure(400, 'invalid_request', 'outcome must be "completed" or "failed".');
      }
      const chosen: JobOutcome =
        outcome === 'completed'
          ? { status: 'completed' }
          : { status: 'failed', error: { code: 'generation_failed', message: 'Failed from the console.' } };
      return json(res, 200, dependencies.submit(prompt, chosen));
    }
    const redelivery = /^\/deliveries\/([^/]+)\/redeliver$/.exec(route);
    if (redelivery) {
      allow(method, 'POST');
      await actionBody(req, host);
      let deliveryId = redelivery[1]!;
      let number: number;
      try {
        deliveryId = decodeURIComponent(deliveryId);
        number = dependencies.redeliver(deliveryId).number;
      } catch (error) {
        throw new ConsoleFailure(404, 'not_found', error instanceof Error ? error.message : String(error));
      }
      return json(res, 200, { deliveryId, number });
    }
    throw new ConsoleFailure(404, 'not_found', `No console endpoint at ${path}.`);
  }

  return {
    handle,
    /** How many event streams are open. */
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

function allow(method: string, allowed: 'GET' | 'POST') {
  if (method !== allowed) throw new ConsoleFailure(405, 'method_not_allowed', `Use ${allowed} here.`);
}

/**
 * A JSON object from a same-origin request. A cross-site form cannot send application/json, and a
 * cross-site fetch that does is preflighted, which the console never approves.
 */
async function actionBody(req: IncomingMessage, host: string): Promise<Record<string, unknown>> {
  const origin = req.headers.origin;
  if (origin !== undefined && origin !== `http://${host}`) {
    throw new ConsoleFailure(403, 'forbidden', 'Console actions are accepted from the console page only.');
  }
  if (!/^application\/json\s*(;|$)/i.test(req.headers['content-type'] ?? '')) {
    throw new ConsoleFailure(415, 'unsupported_media_type', 'Content-Type must be application/json.');
  }
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > MAX_BODY_BYTES) throw new ConsoleFailure(413, 'too_large', 'The body is too large.');
    chunks.push(chunk);
  }
  let body: unknown;
  try {
    body = JSON.parse(Buffer.concat(chunks).toString('utf8') || '{}');
  } catch {
    throw new ConsoleFailure(400, 'invalid_request', 'The body is not valid JSON.');
  }
  if (typeof body !== 'object' || body === null || Array.isArray(body)) {
    throw new ConsoleFailure(400, 'invalid_request', 'The body must be a JSON object.');
  }
  return body as Record<string, unknown>;
}
