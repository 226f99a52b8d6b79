// The client against gateways that misbehave on purpose, over real HTTP on 127.0.0.1: an endless
// answer, redirects to another origin, and echoes of the key and the request in every encoding.
import { once } from 'node:events';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { inspect } from 'node:util';
import { afterEach, describe, expect, test } from 'vitest';
import {
  createClient,
  GatewayError,
  GatewayRedirectError,
  GatewayResponseTooLargeError,
  JobFailedError,
  WaitTimeoutError,
} from 'jobhook/client';

const API_KEY = 'sk_live_hostile_gateway_test_key_0123';

const servers: Server[] = [];
afterEach(async () => {
  for (const server of servers.splice(0)) {
    server.closeAllConnections();
    server.close();
  }
});

interface Seen {
  method: string;
  url: string;
  authorization: string | undefined;
  body: string;
}

/** A real HTTP server; records each request (with its body) before `handle` answers it. */
async function serve(handle: (req: IncomingMessage, res: ServerResponse, seen: Seen) => void) {
  const seen: Seen[] = [];
  const server = createServer((req, res) => {
    let body = '';
    req.setEncoding('utf8');
    req.on('data', (chunk: string) => (body += chunk));
    req.on('end', () => {
      const request = { method: req.method!, url: req.url!, authorization: req.headers.authorization, body };
      seen.push(request);
      handle(req, res, request);
    });
  });
  servers.push(server);
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return { seen, origin: `http://127.0.0.1:${(server.address() as AddressInfo).port}` };
}

async function failure(promise: Promise<unknown>): Promise<GatewayError> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(GatewayError);
  return error as GatewayError;
}

const ok = (res: ServerResponse, data: unknown) =>
  res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ success: true, data }));

describe('an answer longer than maxResponseBytes', () => {
  const GiB = 1024 ** 3;
  const MiB = 1024 ** 2;

  /**
   * Streams a generated 1 GiB JSON body, respecting backpressure, and counts what it got to send.
   * A client that kept reading would get all of it; as a guard for the machine, the server cuts
   * the connection after 256 MiB (still far beyond what a bounded client reads).
   */
  async function endlessGateway(declareLength: boolean) {
    const sent = { bytes: 0, cancelled: false };
    const chunk = Buffer.alloc(64 * 1024, 'a');
    const gateway = await serve((_req, res) => {
      res.writeHead(200, {
        'content-type': 'application/json',
        ...(declareLength && { 'content-length': String(GiB) }),
      });
      const prefix = '{"success":true,"data":"';
      res.write(prefix);
      sent.bytes = prefix.length;
      res.on('close', () => (sent.cancelled = !res.writableFinished));
      const pump = () => {
        while (!res.destroyed && sent.bytes < GiB) {
          if (sent.bytes > 256 * MiB) return res.destroy();
          const piece = chunk.subarray(0, Math.min(chunk.length, GiB - sent.bytes));
          sent.bytes += piece.length;
          if (!res.write(piece)) return res.once('drain', pump);
        }
        if (!res.destroyed) res.end();
      };
      pump();
    });
    return { ...gateway, sent };
  }

  for (const declareLength of [false, true]) {
    test(`fails with response_too_large, memory flat (${declareLength ? 'declared' : 'chunked'} 1 GiB)`, async () => {
      const gateway = await endlessGateway(declareLength);
      const client = createClient({ apiKey: API_KEY, baseUrl: gateway.origin, retries: 0 });
      const before = process.memoryUsage().rss;
      let peak = before;
      const sampler = setInterval(() => (peak = Math.max(peak, process.memoryUsage().rss)), 5);
      try {
        const error = await failure(client.account.balances());
        expect(error).toBeInstanceOf(GatewayResponseTooLargeError);
        expect(error).toMatchObject({ status: 200, code: 'response_too_large' });
        expect(error.message).toMatch(
          /GET \/api\/v1\/account\/balances .*maxResponseBytes \(10485760 bytes\)/,
        );
      } finally {
        peak = Math.max(peak, process.memoryUsage().rss);
        clearInterval(sampler);
      }
      // The client stopped at the cap: it cancelled the body and the server could not go on.
      await expect.poll(() => gateway.sent.cancelled).toBe(true);
      expect(gateway.sent.bytes).toBeLessThan(64 * MiB);
      expect(peak - before).toBeLessThan(128 * MiB);
    });
  }

  test('maxResponseBytes sets the cap; an answer within it is read as usual', async () => {
    const payload = 'x'.repeat(50_000);
    const gateway = await serve((_req, res) => ok(res, { payload }));
    const small = createClient({ apiKey: API_KEY, baseUrl: gateway.origin, maxResponseBytes: 10_000 });
    const error = await failure(small.account.balances());
    expect(error).toMatchObject({ code: 'response_too_large' });
    // Not retried (a GET would be on a 5xx): the same answer would come back.
    expect(gateway.seen).toHaveLength(1);
    const roomy = createClient({ apiKey: API_KEY, baseUrl: gateway.origin, maxResponseBytes: 100_000 });
    await expect(roomy.account.balances()).resolves.toEqual({ payload });
    expect(() => createClient({ apiKey: API_KEY, baseUrl: gateway.origin, maxResponseBytes: 0 })).toThrow(
      /maxResponseBytes/,
    );
  });
});

describe('answers that are not what the endpoint gives (issue 33)', () => {
  test.each(['{"success":true}', '{"success":true,"data":null}', '{"success":true,"data":[1]}'])(
    'images.get answered %s: a GatewayError invalid_response naming the path',
    async (body) => {
      const { origin } = await serve((_req, res) => res.writeHead(200).end(body));
      const client = createClient({ apiKey: API_KEY, baseUrl: origin });
      const error = await failure(client.images.get('task_1'));
      expect(error).toMatchObject({ status: 200, code: 'invalid_response' });
      expect(error.message).toBe(
        'GET /api/v1/images/task_1 failed (200 invalid_response): the answer holds no task record.',
      );
    },
  );

  test.each([
    ['9999999999999', 86_400],
    ['9'.repeat(400), 86_400],
    ['Fri, 01 Jan 2100 00:00:00 GMT', 86_400],
    ['31536000', 86_400],
    ['7', 7],
  ])('429 with Retry-After %s: retryAfterSeconds %d, no retry', async (retryAfter, seconds) => {
    const { origin, seen } = await serve((_req, res) =>
      res.writeHead(429, { 'retry-after': retryAfter }).end('{"success":false}'),
    );
    const client = createClient({ apiKey: API_KEY, baseUrl: origin, retries: { limit: 2, maxDelayMs: 1 } });
    expect(await failure(client.images.get('task_1'))).toMatchObject({
      status: 429,
      retryAfterSeconds: seconds,
    });
    expect(seen).toHaveLength(1);
  });
});

describe('redirects', () => {
  const input = {
    url: 'https://app.test/hook',
    events: ['job.completed'],
    secret_key: 'whsec_cmVkaXJlY3Qtc2VjcmV0LWtleQ==',
  };

  for (const status of [307, 308, 301, 302, 303]) {
    test(`a ${status} to another origin is refused: nothing reaches it`, async () => {
      const elsewhere = await serve((_req, res) => ok(res, { id: 1 }));
      const gateway = await serve((req, res) =>
        res.writeHead(status, { location: `${elsewhere.origin}/api/v1/webhooks` }).end(),
      );
      const client = createClient({ apiKey: API_KEY, baseUrl: gateway.origin });
      const error = await failure(client.webhooks.create(input));
      expect(error).toBeInstanceOf(GatewayRedirectError);
      expect(error).toMatchObject({ status, code: 'redirect_refused' });
      expect(error.message).toContain(`redirected to another origin (${elsewhere.origin})`);
      // A GET (retried on failures) is refused too, and not retried.
      await expect(client.webhooks.list()).rejects.toBeInstanceOf(GatewayRedirectError);
      expect(gateway.seen.map((r) => r.method)).toEqual(['POST', 'GET']);
      expect(elsewhere.seen).toEqual([]);
    });
  }

  test('the same server under another host name is another origin', async () => {
    const gateway = await serve((req, res) => {
      if (req.url === '/api/v1/account/balances')
        return res.writeHead(307, { location: `http://localhost:${req.socket.localPort}/moved` }).end();
      ok(res, { leaked: true });
    });
    const client = createClient({ apiKey: API_KEY, baseUrl: gateway.origin });
    await expect(client.account.balances()).rejects.toMatchObject({ code: 'redirect_refused' });
    expect(gateway.seen.map((r) => r.url)).toEqual(['/api/v1/account/balances']);
  });

  test('a same-origin 307/308 is followed with the method, body and key', async () => {
    const gateway = await serve((req, res, seen) => {
      if (req.url === '/api/v1/webhooks') return res.writeHead(307, { location: '/v2/webhooks' }).end();
      if (req.url === '/v2/webhooks') return res.writeHead(308, { location: '/v3/webhooks' }).end();
      ok(res, { id: 7, echoed: JSON.parse(seen.body) as unknown });
    });
    const client = createClient({ apiKey: API_KEY, baseUrl: gateway.origin });
    await expect(client.webhooks.create(input)).resolves.toMatchObject({ id: 7, echoed: input });
    expect(gateway.seen.map((r) => [r.method, r.url, r.authorization])).toEqual([
      ['POST', '/api/v1/webhooks', `Bearer ${API_KEY}`],
      ['POST', '/v2/webhooks', `Bearer ${API_KEY}`],
      ['POST', '/v3/webhooks', `Bearer ${API_KEY}`],
    ]);
  });

  test('a same-origin redirect loop ends after 5 hops', async () => {
    const gateway = await serve((_req, res) => res.writeHead(302, { location: '/again' }).end());
    const client = createClient({ apiKey: API_KEY, baseUrl: gateway.origin, retries: 0 });
    const error = await failure(client.account.balances());
    expect(error).toMatchObject({ code: 'redirect_refused', status: 302 });
    expect(error.message).toMatch(/redirected more than 5 times/);
    expect(gateway.seen).toHaveLength(6);
  });
});

describe('a gateway that echoes the key and the request back', () => {
  // Characters that JSON-escaping and URL-encoding change, so each form differs from the others.
  const SECRET = 'se"cr\\et/with+plus=and space é 🔑 0123456789';
  const input = { url: 'https://app.test/hook', events: ['job.completed'], secret_key: SECRET };

  /** Every form of `value` a careless gateway might put into its error text. */
  function encodings(value: string): Record<string, string> {
    const bytes = Buffer.from(value);
    return {
      raw: value,
      json: JSON.stringify(value).slice(1, -1),
      url: encodeURIComponent(value),
      form: new URLSearchParams({ v: value }).toString().slice(2),
      hex: bytes.toString('hex'),
      HEX: bytes.toString('hex').toUpperCase(),
      base64: bytes.toString('base64'),
      base64url: bytes.toString('base64url'),
    };
  }

  function echoGateway(status: number) {
    return serve((_req, res, seen) => {
      const echoes = [
        `authorization: ${seen.authorization}`,
        `authorization (base64): ${Buffer.from(seen.authorization ?? '').toString('base64')}`,
        `body: ${seen.body}`,
        `body (base64): ${Buffer.from(seen.body).toString('base64')}`,
        `body (base64url): ${Buffer.from(seen.body).toString('base64url')}`,
        `body (url): ${encodeURIComponent(seen.body)}`,
        ...Object.entries(encodings(API_KEY)).map(([form, text]) => `key (${form}): ${text}`),
        ...Object.entries(encodings(SECRET)).map(([form, text]) => `secret (${form}): ${text}`),
      ];
      res.writeHead(status, {
        'content-type': 'application/json',
        'x-request-id': Buffer.from(API_KEY).toString('hex'),
      });
      res.end(
        JSON.stringify({
          success: false,
          error: { code: `bad_key_${API_KEY}`, message: echoes.join('\n') },
        }),
      );
    });
  }

  for (const status of [400, 401, 500]) {
    test(`no form of the key or the secret_key is in the error (${status})`, async () => {
      const gateway = await echoGateway(status);
      const client = createClient({ apiKey: API_KEY, baseUrl: gateway.origin, retries: 0 });
      const error = await failure(client.webhooks.create(input));
      expect(error.message).toMatch(/POST \/api\/v1\/webhooks failed/);
      expect(error.message).toContain('[redacted]');
      const everything = [
        error.message,
        error.code,
        String(error.requestId),
        error.stack,
        JSON.stringify(error),
      ].join('\n');
      for (const [name, value] of [
        ['key', API_KEY],
        ['secret', SECRET],
      ] as const) {
        for (const [form, text] of Object.entries(encodings(value))) {
          expect(everything, `${name} ${form}`).not.toContain(text);
        }
      }
      // The base64 of the echoed body and header: no run of 12 characters that carries the secret.
      const body = JSON.stringify(input);
      for (const [whole, value] of [
        [body, JSON.stringify(SECRET).slice(1, -1)],
        [`Bearer ${API_KEY}`, API_KEY],
      ] as const) {
        const start = Buffer.byteLength(whole.slice(0, whole.indexOf(value)));
        const encoded = Buffer.from(whole).toString('base64');
        const inner = encoded.slice(
          Math.ceil((start * 8) / 6),
          Math.floor(((start + Buffer.byteLength(value)) * 8) / 6),
        );
        for (let at = 0; at + 12 <= inner.length; at++)
          expect(everything).not.toContain(inner.slice(at, at + 12));
      }
    });
  }
});

describe('a gateway that echoes the key into what it reports about a job', () => {
  /** Everything a log line could show of an error: message, stack, own fields, nested task. */
  const shown = (error: unknown) => [inspect(error, { depth: 10 }), JSON.stringify(error)].join('\n');
  const keyForms = [API_KEY, Buffer.from(API_KEY).toString('base64'), encodeURIComponent(API_KEY)];

  /** Submits as `task_<key>`, and reports that task as `report` says (the key echoed in it). */
  function echoingGateway(report: (authorization: string) => Record<string, unknown>) {
    return serve((req, res, seen) => {
      if (req.method === 'POST') {
        return ok(res, { task_id: `task_${API_KEY}`, credits_used: 1, remaining_credits: 9 });
      }
      ok(res, { task_id: `task_${API_KEY}`, ...report(seen.authorization ?? '') });
    });
  }

  test('a failed job: JobFailedError holds no form of the key, in its message, code, task id or task', async () => {
    const gateway = await echoingGateway((authorization) => ({
      status: 'failed',
      error: {
        code: `denied_${API_KEY}`,
        message: `the request carried ${authorization} (${Buffer.from(API_KEY).toString('base64')})`,
      },
      [`seen_${API_KEY}`]: [{ header: authorization }],
    }));
    const client = createClient({ apiKey: API_KEY, baseUrl: gateway.origin });
    const error = await failure(
      client.images.generateAndWait({ model: 'm', prompt: 'p' }, { pollIntervalMs: 10 }),
    );
    expect(error).toBeInstanceOf(JobFailedError);
    expect(error.message).toBe('the request carried Bearer [redacted] ([redacted])');
    expect(error).toMatchObject({ code: 'denied_[redacted]', taskId: 'task_[redacted]' });
    expect((error as JobFailedError).task).toMatchObject({
      'seen_[redacted]': [{ header: 'Bearer [redacted]' }],
    });
    for (const form of keyForms) expect(shown(error)).not.toContain(form);
  });

  test('a job that does not end: WaitTimeoutError holds no form of the key', async () => {
    const gateway = await echoingGateway(() => ({ status: 'processing' }));
    const client = createClient({ apiKey: API_KEY, baseUrl: gateway.origin });
    const error = await failure(
      client.images.generateAndWait({ model: 'm', prompt: 'p' }, { timeoutMs: 50, pollIntervalMs: 10 }),
    );
    expect(error).toBeInstanceOf(WaitTimeoutError);
    expect((error as WaitTimeoutError).taskId).toBe('task_[redacted]');
    for (const form of keyForms) expect(shown(error)).not.toContain(form);
  });

  test('a poll that times out or is too long: the message names the path without the key', async () => {
    const gateway = await serve((req, res) => {
      if (req.url!.includes('slow')) return; // never answers
      res.writeHead(200, { 'content-type': 'application/json' }).end('x'.repeat(2048));
    });
    const client = createClient({
      apiKey: API_KEY,
      baseUrl: gateway.origin,
      retries: 0,
      maxResponseBytes: 1024,
    });
    const slow = await failure(client.images.get(`slow_${API_KEY}`, { timeoutMs: 100 }));
    expect(slow).toMatchObject({ code: 'timeout' });
    const large = await failure(client.images.get(`large_${API_KEY}`));
    expect(large).toMatchObject({ code: 'response_too_large' });
    for (const error of [slow, large]) {
      expect(error.message).toContain('/api/v1/images/');
      for (const form of keyForms) expect(shown(error)).not.toContain(form);
    }
  });
});

describe('the API key never rides in a cause', () => {
  test.each([
    ['a line break inside', 'sk_live_one\nInjected: header'],
    ['a carriage return and line feed', 'sk_live_one\r\nx'],
    ['a NUL', 'sk_live_one\u0000two'],
    ['a DEL', 'sk_live_one\u007ftwo'],
    ['a trailing newline', 'sk_live_from_a_file\n'],
    ['a leading space', ' sk_live_padded'],
    ['a space inside', 'sk_live one'],
    ['a Latin-1 letter', 'sk_live_clé'],
    ['an emoji', 'sk_live_🔑'],
    ['a zero-width space', 'sk_live_\u200bzero'],
    ['a no-break space', 'sk_live_\u00a0nbsp'],
  ])('createClient refuses a key with %s, naming the fault and not the key', (_what, apiKey) => {
    let thrown: unknown;
    try {
      createClient({ apiKey, baseUrl: 'https://gw.example' });
    } catch (error) {
      thrown = error;
    }
    expect(thrown).toMatchObject({ name: 'JobhookError', code: 'invalid_options' });
    const message = (thrown as Error).message;
    expect(message).toMatch(/^createClient: `apiKey` must be .*; got a string that (has|contains) /);
    expect(message).not.toContain(apiKey.trim());
    expect(inspect(thrown)).not.toContain(apiKey.trim());
  });

  test('what a fetch throws is kept as a redacted copy: code and chain kept, no key in inspect', async () => {
    const quoting: typeof fetch = async (_input, init) => {
      const authorization = (init?.headers as Record<string, string>).authorization;
      const socket = new Error(`socket hang up after ${authorization}`);
      Object.assign(socket, { code: 'ECONNRESET', request: { headers: { authorization } } });
      throw new TypeError(`Invalid header value: ${authorization}`, {
        cause: new AggregateError([socket], `all attempts failed for ${API_KEY}`, { cause: socket }),
      });
    };
    const client = createClient({
      apiKey: API_KEY,
      baseUrl: 'https://gw.example',
      fetch: quoting,
      retries: 0,
    });
    const error = await failure(client.account.balances());
    expect(error).toMatchObject({ name: 'GatewayNetworkError', code: 'network_error' });
    const shown = inspect(error, { depth: Infinity, showHidden: true });
    expect(shown).toContain('Invalid header value: Bearer [redacted]');
    expect(shown).not.toContain(API_KEY);
    const cause = error.cause as Error & { cause: AggregateError };
    expect(cause).toMatchObject({ name: 'TypeError', message: 'Invalid header value: Bearer [redacted]' });
    expect(cause.cause.errors[0]).toMatchObject({
      code: 'ECONNRESET',
      message: 'socket hang up after Bearer [redacted]',
    });
    expect(cause.cause.cause).toMatchObject({ code: 'ECONNRESET' });
  });

  test('an unreachable gateway: the cause chain keeps its system error code', async () => {
    const closed = await serve(() => undefined);
    const origin = closed.origin;
    for (const server of servers.splice(0)) await new Promise((resolve) => server.close(resolve));
    const client = createClient({ apiKey: API_KEY, baseUrl: origin, retries: 0 });
    const error = await failure(client.account.balances());
    expect(error).toMatchObject({ code: 'network_error', cause: { cause: { code: 'ECONNREFUSED' } } });
    expect(inspect(error, { depth: Infinity, showHidden: true })).not.toContain(API_KEY);
  });
});
