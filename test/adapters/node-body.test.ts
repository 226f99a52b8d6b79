// The Node body reader behind the Express, Fastify, Koa and Node adapters, on a real server: what
// it reads, what it refuses, and that a request it is done with can still report an error safely.
import { createServer, request, type IncomingMessage } from 'node:http';
import { afterEach, describe, expect, it } from 'vitest';
import { readNodeBody } from '../../adapters/node-stream.js';
import { BodyReadError, BodyReading } from '../../src/wire/body.js';
import { listen, type Running } from './http.js';

let server: Running | undefined;
afterEach(() => server?.close());

type Outcome = { body?: string; reason?: string; dataListeners?: number };

/** A server that reads each request with readNodeBody (after `before`) and answers what came of it. */
async function readingServer(maxBytes: number, before: (req: IncomingMessage) => void = () => {}) {
  const outcomes: Outcome[] = [];
  server = await listen(
    createServer((req, res) => {
      before(req);
      readNodeBody(req, new BodyReading(maxBytes)).then(
        (body) => {
          outcomes.push({ body: Buffer.from(body).toString('utf8') });
          // A request the reader is done with may still be destroyed with an error: it must not crash.
          req.emit('error', new Error('a late error'));
          res.end('read');
        },
        (error: unknown) => {
          const reason = error instanceof BodyReadError ? error.reason : String(error);
          outcomes.push({ reason, dataListeners: req.listenerCount('data') });
          res.statusCode = reason === 'too_large' ? 413 : 400;
          res.end(reason);
        },
      );
    }),
  );
  return outcomes;
}

/** Sends `chunks` one after another (chunked unless `headers` declares a length); the status, or 'cut'. */
function send(chunks: string[], headers: Record<string, string> = {}, cutAfter?: number) {
  return new Promise<number | 'cut'>((resolve) => {
    const req = request(`${server!.origin}/`, { method: 'POST', headers }, (res) => {
      res.resume();
      res.on('end', () => resolve(res.statusCode!));
    });
    req.on('error', () => resolve('cut'));
    chunks.forEach((chunk, i) => {
      req.write(chunk);
      if (i + 1 === cutAfter) setTimeout(() => req.destroy(), 50);
    });
    if (cutAfter === undefined) req.end();
  });
}

describe('readNodeBody', () => {
  it('reads a body of one chunk or many, exactly', async () => {
    const outcomes = await readingServer(1024);
    expect(await send(['{"a":1}'])).toBe(200);
    expect(await send(['{"a":', '2', '}'])).toBe(200);
    expect(outcomes.map((o) => o.body)).toEqual(['{"a":1}', '{"a":2}']);
  });

  it('refuses a declared length over the limit before reading anything', async () => {
    const outcomes = await readingServer(8);
    expect(await send(['0123456789'], { 'content-length': '10' })).toBe(413);
    expect(outcomes).toEqual([{ reason: 'too_large', dataListeners: 0 }]);
  });

  it('stops a streamed body as soon as it passes the limit, and the client still gets the answer', async () => {
    const outcomes = await readingServer(8);
    expect(await send(['01234', '56789', 'abcde'])).toBe(413);
    expect(outcomes).toEqual([{ reason: 'too_large', dataListeners: 0 }]);
  });

  it('refuses a request whose stream was decoded to text, since its bytes may have been altered', async () => {
    const outcomes = await readingServer(1024, (req) => req.setEncoding('latin1'));
    expect(await send(['{"a":1}'])).toBe(400);
    expect(outcomes).toEqual([{ reason: 'unreadable', dataListeners: 0 }]);
  });

  it('rejects an upload cut off before its end as unreadable', async () => {
    const outcomes = await readingServer(1024);
    expect(await send(['{"a":'], { 'content-length': '100' }, 1)).toBe('cut');
    await expect.poll(() => outcomes).toEqual([{ reason: 'unreadable', dataListeners: 0 }]);
  });
});
