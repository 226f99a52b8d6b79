// Oversized, slow and abandoned uploads through every conformance target, with the default 1 MiB
// limit: a 100 MB body is refused 413 once the server has read at most the limit plus one chunk
// (counted on the server's sockets; chunked, plus the 256 KiB of the rest it reads and drops) and
// memory stays bounded; a trickling body that is abandoned runs nothing and leaves no connection
// behind; the server keeps serving throughout.
import { signDelivery } from 'jobhook/testing';
import { afterEach, describe, expect, test } from 'vitest';
import { completed, SECRET } from '../adapters/fixtures.js';
import type { Running } from '../adapters/http.js';
import { PATH, targets } from '../adapters/targets.js';
import { DISCARD_BYTES } from '../../src/wire/unread-body.js';
import { CHUNK, countingReceiver, postValid, trickleThenAbort, upload, watchConnections } from './upload.js';

const MIB = 1024 * 1024;
const LIMIT = MIB; // the default
const HUNDRED_MB = 100 * 1000 * 1000;
/** Request line and headers arrive in the same reads as the body; they are a few hundred bytes. */
const HEADER_ALLOWANCE = 4096;
/**
 * What the server may have read when it answers: the request head and one socket read (64 KiB)
 * for a declared length, refused on the header; for a chunked body, the limit and the one read
 * that crossed it, then what is read and dropped of the rest before answering, so that the
 * connection could carry another request (DISCARD_BYTES, and the read that crossed it).
 */
const bound = (declared: boolean) =>
  (declared ? 0 : LIMIT + CHUNK + DISCARD_BYTES) + CHUNK + HEADER_ALLOWANCE;
/** Node's reads after the answer is written and before it closes the connection. */
const READ_AHEAD = 4 * CHUNK;
/** Generous: a receiver that buffered the upload would grow by about 100 MB. */
const MEMORY_BOUND = 48 * MIB;

/** TCP handles the process holds (the listening server's among them). */
const openSockets = () => process.getActiveResourcesInfo().filter((name) => name === 'TCPSocketWrap').length;

const memory = () => {
  const { rss, heapUsed, arrayBuffers } = process.memoryUsage();
  return { rss, heapUsed, arrayBuffers };
};

describe.each(targets)('uploads: $name', (target) => {
  let server: Running | undefined;
  afterEach(() => server?.close());

  test.each([
    { declared: true, stop: true, how: 'with a declared Content-Length' },
    { declared: false, stop: true, how: 'chunked, length undeclared' },
    { declared: true, stop: false, how: 'declared, from a client that ignores the answer' },
    { declared: false, stop: false, how: 'chunked, from a client that ignores the answer' },
  ])(
    'a 100 MB upload $how is refused 413 after at most the limit plus one chunk',
    async ({ declared, stop }) => {
      const { receiver, calls } = countingReceiver();
      server = await target.start(receiver);
      const watch = watchConnections(server.server);
      const { headers } = signDelivery({ secret: SECRET, payload: completed() });
      const before = memory();
      let atAnswer = before;
      const refused = await upload(`${server.origin}${PATH}`, headers, {
        total: HUNDRED_MB,
        declared,
        stopOnAnswer: stop,
        onAnswer: () => (atAnswer = memory()),
      });
      await watch.allClosed();
      const atRefusal = watch.atAnswer[0]!;
      const inAll = watch.bytesRead();
      const grew = (key: keyof typeof before) => ((atAnswer[key] - before[key]) / MIB).toFixed(1);
      console.info(
        `[uploads] ${target.name}, ${declared ? 'declared' : 'chunked'}${stop ? '' : ', client ignores the answer'}: ` +
          `${refused.status} after the server read ${atRefusal} bytes (bound ${bound(declared)}), ` +
          `${inAll} read before the connection closed, of ${refused.pulled} the client produced; ` +
          `rss +${grew('rss')} MiB, heapUsed +${grew('heapUsed')} MiB, arrayBuffers +${grew('arrayBuffers')} MiB`,
      );

      expect(refused.status).toBe(413);
      expect(JSON.parse(refused.body)).toMatchObject({ error: { code: 'payload_too_large' } });
      expect(calls).toEqual([]);
      expect(watch.atAnswer).toHaveLength(1);
      expect(atRefusal).toBeLessThanOrEqual(bound(declared));
      // After the answer Node reads ahead a little, then closes the connection: never the 100 MB.
      expect(inAll).toBeLessThanOrEqual(bound(declared) + READ_AHEAD);
      for (const key of ['rss', 'heapUsed', 'arrayBuffers'] as const) {
        expect(atAnswer[key] - before[key]).toBeLessThan(MEMORY_BOUND);
      }
      // And the server still serves.
      expect(await postValid(server.origin)).toBe(200);
      expect(calls).toHaveLength(1);
    },
  );

  test.each([
    { declared: true, how: 'a declared length' },
    { declared: false, how: 'chunked' },
  ])(
    'a body trickling in with $how, then abandoned mid-body: nothing runs, no connection is left, serving goes on',
    async ({ declared }) => {
      // No body deadline: a busy machine can take longer than the default 10 s over the trickle,
      // and the 408 that ends it would be an answer; the test is that it is abandoned unanswered.
      const { receiver, calls, logger } = countingReceiver({ bodyTimeoutMs: 0 });
      server = await target.start(receiver);
      const watch = watchConnections(server.server);
      const socketsBefore = openSockets();
      const origin = server.origin;
      const delivery = signDelivery({ secret: SECRET, payload: completed() });
      const body = Buffer.from(delivery.body);
      let served = 0;
      // Between bytes, a whole valid delivery is answered: the trickle blocks nothing.
      const tick = async () => {
        expect(await postValid(origin)).toBe(200);
        served++;
      };
      const { answered } = await trickleThenAbort(`${origin}${PATH}`, delivery.headers, body, {
        bytes: Math.floor(body.length / 2),
        declared,
        tick,
      });
      await watch.allClosed();

      expect(answered).toBe(false);
      expect(served).toBe(Math.floor(body.length / 2));
      // Only the deliveries sent between bytes ran; the abandoned one never did.
      expect(calls).toHaveLength(served);
      expect(calls).not.toContain((JSON.parse(body.toString()) as { id: string }).id);
      expect(watch.open).toBe(0);
      // Nothing left behind in the process either: no more sockets than before the trickle.
      expect(openSockets()).toBeLessThanOrEqual(socketsBefore);
      // No delivery is left in flight: close() would otherwise wait for it.
      await receiver.close();
      expect(logger.lines.filter((line) => line.startsWith('error'))).toEqual([]);
    },
  );

  test('a valid body trickling in byte by byte is handled once when it completes', async () => {
    const { receiver, calls } = countingReceiver();
    server = await target.start(receiver);
    const delivery = signDelivery({ secret: SECRET, payload: completed() });
    const body = Buffer.from(delivery.body);
    const { request } = await import('node:http');
    const status = await new Promise<number>((resolve, reject) => {
      const req = request(`${server!.origin}${PATH}`, {
        method: 'POST',
        agent: false,
        headers: { ...delivery.headers, 'content-length': String(body.length) },
      });
      req.on('response', (res) => {
        res.resume();
        resolve(res.statusCode ?? 0);
      });
      req.on('error', reject);
      req.flushHeaders();
      let at = 0;
      const next = () => {
        if (at >= body.length) return void req.end();
        req.write(body.subarray(at, ++at), () => setImmediate(next));
      };
      next();
    });
    expect(status).toBe(200);
    expect(calls).toEqual([(JSON.parse(body.toString()) as { id: string }).id]);
  });
});
