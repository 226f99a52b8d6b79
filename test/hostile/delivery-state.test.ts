// Issue 11 over real HTTP through every conformance target: headers are checked before the body
// is read (an unsigned or stale request is refused 401 without waiting for its body), a body that
// takes too long is refused 408 and its connection closed, a throwing logger changes no answer and
// crashes nothing, and neither an unprintable throw nor a hanging onError loses an answer.
import { request } from 'node:http';
import { createReceiver, type Receiver } from 'jobhook';
import { signDelivery } from 'jobhook/testing';
import { afterEach, describe, expect, test } from 'vitest';
import { completed, SECRET } from '../adapters/fixtures.js';
import { postUnfinished, type Running } from '../adapters/http.js';
import { PATH, targets } from '../adapters/targets.js';
import { postOnce, watchConnections } from './upload.js';

const MIB = 1024 * 1024;
/** The request head and the one chunk sent: what a server that did not wait for the body read. */
const HEAD_AND_CHUNK = 4096;

const quiet = { error: () => undefined, warn: () => undefined };

describe.each(targets)('delivery state over HTTP: $name', (target) => {
  let server: Running | undefined;
  afterEach(() => server?.close());

  async function start(receiver: Receiver) {
    server = await target.start(receiver);
    return `${server.origin}${PATH}`;
  }

  test.each([
    ['without any signature header', () => ({})],
    ['with a malformed timestamp', () => ({ ...signed().headers, 'webhook-timestamp': 'soon' })],
    [
      'with a stale timestamp',
      () => signDelivery({ secret: SECRET, payload: completed(), timestamp: 1_000_000 }).headers,
    ],
  ])('a POST %s declaring 1 MiB is refused 401 before its body arrives', async (_, headers) => {
    const receiver = createReceiver({ secret: SECRET, logger: quiet });
    let runs = 0;
    receiver.onAny(() => void runs++);
    const url = await start(receiver);
    const watch = watchConnections(server!.server);
    const { status, body } = await postUnfinished(
      url,
      { 'content-type': 'application/json', ...headers(), 'content-length': String(MIB) },
      { chunk: Buffer.from('{"id":'), endless: false },
    );
    expect(status).toBe(401);
    expect(JSON.parse(body)).toMatchObject({ error: { code: 'invalid_signature' } });
    expect(watch.atAnswer[0]).toBeLessThanOrEqual(HEAD_AND_CHUNK);
    expect(runs).toBe(0);
  });

  test('a signed body that trickles past bodyTimeoutMs is refused 408 and its connection closed', async () => {
    const receiver = createReceiver({ secret: SECRET, logger: quiet, bodyTimeoutMs: 150 });
    let runs = 0;
    receiver.onAny(() => void runs++);
    const url = await start(receiver);
    const watch = watchConnections(server!.server);
    const delivery = signed();
    const bytes = Buffer.from(delivery.body);
    const started = Date.now();
    const answer = await new Promise<{ status: number; body: string }>((resolve, reject) => {
      const req = request(url, {
        method: 'POST',
        agent: false,
        headers: { ...delivery.headers, 'content-length': String(bytes.length) },
      });
      let at = 0;
      const timer = setInterval(() => at < bytes.length - 1 && req.write(bytes.subarray(at, ++at)), 20);
      req.on('response', (res) => {
        clearInterval(timer);
        const chunks: Buffer[] = [];
        res.on('data', (data: Buffer) => chunks.push(data));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString() }));
      });
      req.on('error', (error) => {
        clearInterval(timer);
        reject(error);
      });
      req.flushHeaders();
    });
    expect(answer.status).toBe(408);
    expect(JSON.parse(answer.body)).toMatchObject({ error: { code: 'body_timeout' } });
    expect(Date.now() - started).toBeGreaterThanOrEqual(140);
    await watch.allClosed(); // the server closed the trickling connection
    expect(runs).toBe(0);
    // Nothing stays in flight, and serving goes on.
    expect((await postOnce(url, delivery.headers, delivery.body)).status).toBe(200);
    await receiver.close({ timeoutMs: 1000 });
  });

  test('a logger that throws changes no answer and crashes nothing', async () => {
    const fail = () => {
      throw new Error('log sink down');
    };
    const receiver = createReceiver({ secret: SECRET, logger: { error: fail, warn: fail } });
    receiver.onJobCompleted(() => {
      throw new Error('logged failure');
    });
    const url = await start(receiver);
    const unsigned = await postOnce(url, { 'content-type': 'application/json' }, JSON.stringify(completed()));
    expect(unsigned.status).toBe(401);
    const failing = signed();
    expect((await postOnce(url, failing.headers, failing.body)).status).toBe(500);
    const notJson = signDelivery({ secret: SECRET, payload: '{' });
    expect((await postOnce(url, notJson.headers, notJson.body)).status).toBe(400);
  });

  test('a handler throwing Object.create(null), with an onError that never settles: 500, then the retry is handled', async () => {
    const receiver = createReceiver({ secret: SECRET, logger: quiet });
    let runs = 0;
    receiver.onJobCompleted(() => {
      if (++runs === 1) throw Object.create(null);
    });
    receiver.onError(() => new Promise(() => undefined));
    const url = await start(receiver);
    const delivery = signed();
    expect((await postOnce(url, delivery.headers, delivery.body)).status).toBe(500);
    expect(JSON.parse((await postOnce(url, delivery.headers, delivery.body)).body)).toEqual({ ok: true });
    expect(runs).toBe(2);
    await receiver.close({ timeoutMs: 50 });
  });
});

function signed() {
  return signDelivery({ secret: SECRET, payload: completed() });
}
