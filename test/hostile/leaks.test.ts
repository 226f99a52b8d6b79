// Every answer path, through every adapter target (and the mounts that consume the body first),
// with every response (status line, headers, body) and every log line collected and scanned:
// no secret in any form, no signature value, no stack trace.
import { createServer } from 'node:http';
import { getRequestListener } from '@hono/node-server';
import express from 'express';
import { Hono } from 'hono';
import { createReceiver, type Receiver } from 'jobhook';
import type { DedupeStore } from 'jobhook/extend';
import { expressHandler } from 'jobhook/express';
import { honoHandler } from 'jobhook/hono';
import { nodeHandler } from 'jobhook/node';
import { signDelivery } from 'jobhook/testing';
import { afterAll, describe, expect, test } from 'vitest';
import { completed } from '../adapters/fixtures.js';
import { listen, type Running } from '../adapters/http.js';
import { PATH, targets, type Target } from '../adapters/targets.js';
import { deferred, streamedPost } from '../fixtures.js';
import { capturingLogger } from '../support/traffic.js';
import { postOnce, upload } from './upload.js';

// Its own secret, not test/fixtures.ts's: the scan looks for the raw bytes too, in every encoding.
const RAW_SECRET = 'leak-scan-secret-bytes-0123456789';
const SECRET = `whsec_${Buffer.from(RAW_SECRET).toString('base64')}`;
/** The gateway's own form: a plain string used as its UTF-8 bytes. */
const OLD_SECRET = 'plain-old-secret-key-for-rotation';
const LIMIT = 2048;

/** Everything that must never appear in an answer or a log line. */
function forbiddenStrings(signatures: Iterable<string>): string[] {
  const forms = [SECRET, SECRET.slice('whsec_'.length), RAW_SECRET, OLD_SECRET];
  for (const secret of [RAW_SECRET, OLD_SECRET]) {
    const bytes = Buffer.from(secret);
    forms.push(bytes.toString('hex'), bytes.toString('base64'), bytes.toString('base64url'));
  }
  for (const header of signatures) {
    for (const entry of header.split(/\s+/)) {
      const value = entry.replace(/^v1a?,/, '');
      // Short fragments ("v1", "") would match innocent text; every real signature is 44 chars.
      if (value.length >= 16) forms.push(value);
    }
  }
  return forms;
}

const STACK = [/\n\s+at /, /\bat [^\s]+ \([^)]*:\d+:\d+\)/, /\.(ts|js|cjs|mjs):\d+:\d+/];

interface Collected {
  texts: string[];
  signatures: Set<string>;
  statuses: Map<string, Set<string>>;
}

const collected: Collected = { texts: [], signatures: new Set(), statuses: new Map() };

function record(where: string, status: number, headers: Record<string, unknown>, body: string) {
  collected.texts.push(`${where} ${status} ${JSON.stringify(headers)} ${body}`);
  let code: string;
  try {
    const parsed = JSON.parse(body) as { error?: { code?: string }; duplicate?: boolean };
    code = parsed.error?.code ?? (parsed.duplicate ? 'duplicate' : 'ok');
  } catch {
    code = 'not json';
  }
  const set = collected.statuses.get(where) ?? new Set();
  set.add(`${status} ${code}`);
  collected.statuses.set(where, set);
}

function headersOf(headers: Headers): Record<string, string> {
  const all: Record<string, string> = {};
  headers.forEach((value, name) => (all[name] = value));
  return all;
}

function sign(payload: unknown, options: { secret?: string; timestamp?: number } = {}) {
  const delivery = signDelivery({
    secret: options.secret ?? SECRET,
    payload,
    ...(options.timestamp && { timestamp: options.timestamp }),
  });
  collected.signatures.add(delivery.headers['webhook-signature']!);
  return delivery;
}

/** A receiver wired for the battery: a handler that fails on request, one that hangs until aborted. */
function batteryReceiver(logger: ReturnType<typeof capturingLogger>) {
  const gate = { block: deferred(), entered: deferred(), mode: 'ok' as 'ok' | 'throw' | 'hang' | 'block' };
  const receiver = createReceiver({
    secret: [SECRET, OLD_SECRET],
    maxBodyBytes: LIMIT,
    handlerTimeoutMs: 200,
    logger,
  });
  receiver.onJobCompleted(async (_event, { signal }) => {
    if (gate.mode === 'throw') {
      // A handler error whose stack names files and whose message names a secret: only its
      // message may be logged, redacted.
      throw new Error(`the database is down (tried key ${OLD_SECRET})`);
    }
    if (gate.mode === 'hang') {
      await new Promise((resolve) => signal.addEventListener('abort', resolve));
    }
    if (gate.mode === 'block') {
      gate.entered.resolve();
      await gate.block.promise;
    }
  });
  return { receiver, gate };
}

/** Sends one delivery of every kind a sender can produce to `url`, recording every answer. */
async function battery(
  where: string,
  url: string,
  receiver: Receiver,
  gate: ReturnType<typeof batteryReceiver>['gate'],
) {
  const send = async (headers: Record<string, string>, body: string | Uint8Array, method = 'POST') => {
    const response = await fetch(url, {
      method,
      headers,
      ...(method !== 'GET' && { body: body as BodyInit }),
    });
    const text = await response.text();
    record(where, response.status, headersOf(response.headers), text);
    return response.status;
  };
  const valid = sign(completed());
  await send(valid.headers, valid.body); // 200
  await send(valid.headers, valid.body); // 200 duplicate
  const rotated = sign(completed(), { secret: OLD_SECRET });
  await send(rotated.headers, rotated.body); // 200 with the older secret
  await send({ 'content-type': 'application/json' }, valid.body); // 401 missing headers
  await send(
    sign(completed(), { secret: 'whsec_' + Buffer.from('someone else').toString('base64') }).headers,
    valid.body,
  ); // 401
  await send(sign(completed(), { timestamp: Math.floor(Date.now() / 1000) - 3600 }).headers, valid.body); // 401 expired
  const garbled = sign(completed());
  await send(
    { ...garbled.headers, 'webhook-signature': `v1a,${garbled.headers['webhook-signature']!.slice(3)}` },
    garbled.body,
  );
  await send({ ...garbled.headers, 'webhook-id': 'x'.repeat(300) }, garbled.body); // 401 id too long
  await send({ ...garbled.headers, 'webhook-timestamp': 'soon' }, garbled.body); // 401
  const notJson = sign('{"type": "job.');
  await send(notJson.headers, notJson.body); // 400 invalid_json
  const wrongShape = sign({ id: 'evt_1', type: 'job.completed', data: { task_id: 7, secret: RAW_SECRET } });
  await send(wrongShape.headers, wrongShape.body); // 400 invalid_payload
  const latin1 = sign(Uint8Array.from([0x7b, 0xff, 0xfe, 0x7d]));
  await send(latin1.headers, latin1.body); // 400 not UTF-8
  await send(valid.headers, '', 'GET'); // 405, or the framework's 404
  const big = sign(completed({ padding: 'x'.repeat(LIMIT) }));
  await send(big.headers, big.body); // 413 declared
  const streamed = await upload(url, sign(completed()).headers, { total: 10 * LIMIT, declared: false });
  record(where, streamed.status, {}, streamed.body); // 413 streamed

  gate.mode = 'throw';
  const failing = sign(completed());
  await send(failing.headers, failing.body); // 500 handler_failed
  gate.mode = 'hang';
  const slow = sign(completed());
  await send(slow.headers, slow.body); // 500 handler timed out
  gate.mode = 'block';
  gate.block = deferred();
  gate.entered = deferred();
  const busy = sign(completed());
  const first = send(busy.headers, busy.body);
  await gate.entered.promise;
  await send(busy.headers, busy.body); // 409 in_progress
  const closing = receiver.close();
  await send(sign(completed()).headers, valid.body); // 503 shutting_down
  gate.block.resolve();
  await first;
  await closing;
}

/** Mounts where a body parser runs first: every POST is answered 500 body_unavailable. */
const consuming: Target[] = [
  {
    name: 'express with express.json() first',
    start: (receiver) => listen(express().use(express.json()).post(PATH, expressHandler(receiver))),
  },
  {
    name: 'node middleware after express.json()',
    start: (receiver) =>
      listen(
        express()
          .use(express.json())
          .use(nodeHandler(receiver, { path: PATH })),
      ),
  },
  {
    name: 'hono with a c.req.json() middleware first',
    start: (receiver) =>
      listen(
        getRequestListener(
          new Hono()
            .use(async (c, next) => {
              await c.req.json().catch(() => undefined);
              await next();
            })
            .post(PATH, honoHandler(receiver)).fetch,
        ),
      ),
  },
];
const mounts = [...targets, ...consuming];

describe('nothing secret or internal leaks', () => {
  const logs: string[] = [];

  test.each(mounts)('every answer path through $name is recorded', async (mount) => {
    const logger = capturingLogger();
    const { receiver, gate } = batteryReceiver(logger);
    let server: Running | undefined;
    try {
      server = await mount.start(receiver);
      const url = `${server.origin}${PATH}`;
      if (consuming.includes(mount)) {
        for (const delivery of [sign(completed()), sign(completed(), { secret: OLD_SECRET })]) {
          const answer = await postOnce(url, delivery.headers, delivery.body);
          record(mount.name, answer.status, {}, answer.body);
        }
      } else {
        await battery(mount.name, url, receiver, gate);
      }
    } finally {
      await server?.close();
      logs.push(...logger.lines);
    }
  });

  test('the paths only the core or one adapter reaches are recorded too', async () => {
    const logger = capturingLogger();
    // 404 from nodeHandler's `path`.
    const { receiver } = batteryReceiver(logger);
    const server = await listen(createServer(nodeHandler(receiver, { path: PATH })));
    try {
      const elsewhere = await postOnce(`${server.origin}/elsewhere`, sign(completed()).headers, '{}');
      record('nodeHandler path', elsewhere.status, {}, elsewhere.body);
    } finally {
      await server.close();
    }
    // 400 body_unreadable: the stream breaks before its end.
    const broken = new ReadableStream<Uint8Array>({
      start(controller) {
        controller.enqueue(Buffer.from('{"id":'));
        controller.error(new Error(`socket reset while reading ${SECRET}`));
      },
    });
    const unreadable = await receiver.fetch(streamedPost(sign(completed()).headers, broken));
    record('receiver.fetch', unreadable.status, headersOf(unreadable.headers), await unreadable.text());
    // 500 internal_error: a dedupe store that fails, with a stack and a connection string.
    const failingStore: DedupeStore = {
      leaseMs: 30_000,
      renew: () => true,
      claim() {
        throw new Error(`redis://:${RAW_SECRET}@cache:6379 refused the connection`);
      },
      complete: () => undefined,
      release: () => undefined,
    };
    const withStore = createReceiver({ secret: SECRET, dedupe: failingStore, logger });
    withStore.onAny(() => undefined);
    const internal = await withStore.receive(sign(completed()));
    record('receive, failing dedupe store', internal.status, internal.headers, internal.body);
    // A verifier that throws.
    const throwing = createReceiver({
      secret: SECRET,
      logger,
      verifier: () => {
        throw new Error(`cannot verify with ${SECRET}`);
      },
    });
    const thrown = await throwing.receive(sign(completed()));
    record('receive, throwing verifier', thrown.status, thrown.headers, thrown.body);
    logs.push(...logger.lines);
  });

  afterAll(() => {
    // Every answer path of the design was reached, somewhere.
    const reached = new Set([...collected.statuses.values()].flatMap((set) => [...set]));
    for (const path of [
      '200 ok',
      '200 duplicate',
      '401 invalid_signature',
      '400 invalid_json',
      '400 invalid_payload',
      '400 body_unreadable',
      '404 not_found',
      '405 method_not_allowed',
      '409 in_progress',
      '413 payload_too_large',
      '500 handler_failed',
      '500 body_unavailable',
      '500 internal_error',
      '503 shutting_down',
    ]) {
      expect(reached, path).toContain(path);
    }
    const everything = [...collected.texts, ...logs];
    const forbidden = forbiddenStrings(collected.signatures);
    const leaks: string[] = [];
    for (const text of everything) {
      for (const secret of forbidden) if (text.includes(secret)) leaks.push(`${secret} in ${text}`);
      // A handler failure's log line carries the stack of what the handler threw (so the failing
      // line can be found); no answer, and no other line, carries a stack.
      const operatorStack = logs.includes(text) && /\n {2}caused by /.test(text);
      if (!operatorStack)
        for (const stack of STACK) if (stack.test(text)) leaks.push(`a stack trace in ${text}`);
    }
    expect(leaks).toEqual([]);
    console.info(
      `[leaks] scanned ${collected.texts.length} responses and ${logs.length} log lines from ${mounts.length + 3} mounts ` +
        `for ${forbidden.length} forbidden strings (${collected.signatures.size} signatures) and stack traces: ` +
        `${leaks.length} found; paths reached: ${[...reached].sort().join(', ')}`,
    );
  });
});
