// A body left unread by a refusal given before it was read to its end (src/wire/unread-body.ts):
// the rest is read and dropped, within 256 KiB and one second, before the answer goes; once it has
// ended the connection is kept, otherwise the answer closes it. Through receiver.fetch on Web
// streams, and through the Node adapter on a real server.
import { createServer, request } from 'node:http';
import { createReceiver } from 'jobhook';
import { nodeHandler } from 'jobhook/node';
import { signDelivery } from 'jobhook/testing';
import { afterEach, describe, expect, test, vi } from 'vitest';
import { DISCARD_BYTES } from '../../src/wire/unread-body.js';
import { listen, type Running } from './http.js';
import { completedPayload, SECRET, streamedPost } from '../fixtures.js';

const CHUNK = 16 * 1024;

const make = () =>
  createReceiver({ secret: SECRET, maxBodyBytes: 4096, logger: { error: vi.fn(), warn: vi.fn() } });

/** A body of `chunks` chunks of 16 KiB (for ever when Infinity) that counts what was pulled. */
function counted(chunks: number) {
  const seen = { pulled: 0, ended: false, cancelled: false };
  const stream = new ReadableStream<Uint8Array>({
    pull(controller) {
      if (seen.pulled === chunks) {
        seen.ended = true;
        return controller.close();
      }
      seen.pulled++;
      controller.enqueue(new Uint8Array(CHUNK).fill(0x78));
    },
    cancel() {
      seen.cancelled = true;
    },
  });
  return { stream, seen };
}

const signedHeaders = () => signDelivery({ secret: SECRET, payload: completedPayload() }).headers;

describe('receiver.fetch, a body left unread', () => {
  test.each([
    ['refused on its signature headers (401)', () => ({}), 401],
    [
      'refused for its content encoding (415)',
      () => ({ ...signedHeaders(), 'content-encoding': 'gzip' }),
      415,
    ],
    ['past the limit (413)', signedHeaders, 413],
  ] as const)(
    '%s: a short rest is read to its end before the answer, which keeps the connection',
    async (_name, headers, status) => {
      const { stream, seen } = counted(4);
      const response = await make().fetch(streamedPost(headers(), stream));
      expect(response.status).toBe(status);
      expect(response.headers.get('connection')).toBeNull();
      expect(seen).toMatchObject({ ended: true, cancelled: false });
    },
  );

  test.each([
    ['refused on its signature headers (401)', () => ({}), 401],
    ['past the limit (413)', signedHeaders, 413],
  ] as const)(
    '%s: an endless rest is read up to the bound, then cancelled, and the answer closes the connection',
    async (_name, headers, status) => {
      const { stream, seen } = counted(Infinity);
      const response = await make().fetch(streamedPost(headers(), stream));
      expect(response.status).toBe(status);
      expect(response.headers.get('connection')).toBe('close');
      expect(seen.cancelled).toBe(true);
      // What was dropped: the bound and the chunk that crossed it (and what the reader held for the limit).
      expect(seen.pulled * CHUNK).toBeLessThanOrEqual(DISCARD_BYTES + 4096 + 3 * CHUNK);
    },
  );

  test('a body that hangs is waited for a second at most, then cancelled, and the answer closes the connection', async () => {
    let cancelled = false;
    const hanging = new ReadableStream<Uint8Array>({
      pull: () => new Promise(() => undefined),
      cancel() {
        cancelled = true;
      },
    });
    const response = await make().fetch(streamedPost({}, hanging));
    expect(response.status).toBe(401);
    expect(response.headers.get('connection')).toBe('close');
    expect(cancelled).toBe(true);
  });
});

describe('the Node adapter, a body left unread', () => {
  let server: Running | undefined;
  afterEach(() => server?.close());

  /** An unsigned chunked POST of `chunks` 16 KiB chunks (for ever when Infinity): the answer's status and Connection. */
  function unsigned(chunks: number) {
    return new Promise<{ status: number; connection: string | undefined }>((resolve, reject) => {
      const req = request(`${server!.origin}/webhooks`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', connection: 'keep-alive' },
      });
      let sent = 0;
      let answered = false;
      const chunk = Buffer.alloc(CHUNK, 0x78);
      const pump = () => {
        while (!answered && sent < chunks) {
          sent++;
          if (!req.write(chunk)) return void req.once('drain', pump);
        }
        if (sent >= chunks) req.end();
      };
      req.on('response', (res) => {
        answered = true;
        res.resume();
        res.on('end', () => resolve({ status: res.statusCode!, connection: res.headers.connection }));
        req.destroy();
      });
      req.on('error', (error) => {
        if (!answered) reject(error);
      });
      pump();
    });
  }

  test('a short rest is read to its end before the 401, which keeps the connection', async () => {
    server = await listen(createServer(nodeHandler(make())));
    expect(await unsigned(8)).toEqual({ status: 401, connection: 'keep-alive' });
  });

  test('an endless rest is read up to the bound; the 401 closes the connection', async () => {
    server = await listen(createServer(nodeHandler(make())));
    expect(await unsigned(Infinity)).toEqual({ status: 401, connection: 'close' });
  });
});
