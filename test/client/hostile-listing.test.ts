// Issue 33.3: a gateway that answers GET /api/v1/webhooks with a listing no heap can hold: many
// pages, long pages, one page of millions of tiny items. Over real HTTP on 127.0.0.1; each page is
// generated as a stream, so the test itself holds none of it. The client keeps at most
// MAX_LIST_ITEMS items and maxResponseBytes of pages in all, and fails past either with
// listing_too_large.
import { once } from 'node:events';
import { createServer, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createClient, GatewayError } from 'jobhook/client';
import { afterEach, describe, expect, test } from 'vitest';

const API_KEY = 'sk_live_hostile_listing_test_key_0123';
const MiB = 1024 ** 2;

const servers: Server[] = [];
afterEach(() => {
  for (const server of servers.splice(0)) {
    server.closeAllConnections();
    server.close();
  }
});

/** Writes `pieces` to `res` as the socket drains, then ends it; stops if the client goes away. */
function stream(res: ServerResponse, pieces: Iterable<string>): void {
  const iterator = pieces[Symbol.iterator]();
  const pump = () => {
    while (!res.destroyed) {
      const next = iterator.next();
      if (next.done) return void res.end();
      if (!res.write(next.value)) return void res.once('drain', pump);
    }
  };
  pump();
}

/** `count` copies of `item`, comma-separated, in pieces of about 64 KB. */
function* repeated(item: string, count: number): Generator<string> {
  const perPiece = Math.max(1, Math.floor(65_536 / (item.length + 1)));
  for (let done = 0; done < count; done += perPiece) {
    const n = Math.min(perPiece, count - done);
    yield (done === 0 ? '' : ',') + Array.from({ length: n }, () => item).join(',');
  }
}

/**
 * A gateway whose every listing page (`?cursor=<n>`, 100 of them) is
 * `{ items: [<page(n)>], next_cursor }`, or the bare array `[<page(n)>]` when `bare`.
 */
async function listingGateway(page: (n: number) => Iterable<string>, bare = false) {
  const seen: string[] = [];
  const server = createServer((req, res) => {
    seen.push(req.url!);
    const n = Number(new URL(req.url!, 'http://x').searchParams.get('cursor') ?? '1');
    res.writeHead(200, { 'content-type': 'application/json' });
    const next = n < 100 ? `"${n + 1}"` : 'null';
    stream(
      res,
      bare
        ? ['{"success":true,"data":[', ...page(n), ']}']
        : ['{"success":true,"data":{"items":[', ...page(n), `],"next_cursor":${next}}}`],
    );
  });
  servers.push(server);
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return { seen, origin: `http://127.0.0.1:${(server.address() as AddressInfo).port}` };
}

/** A webhook of the listing, `padding` characters long in its url. */
const webhook = (padding = 0) =>
  `{"id":1,"url":"https://a.example/${'a'.repeat(padding)}","events":["job.completed"],"status":"active","total_failed":0}`;

/** Lists, and tells the failure and how much the heap grew while the listing was still held. */
async function list(origin: string) {
  const client = createClient({ apiKey: API_KEY, baseUrl: origin });
  const before = process.memoryUsage().heapUsed;
  const outcome = await client.webhooks.list().catch((error: unknown) => error);
  const grewBy = process.memoryUsage().heapUsed - before;
  return { outcome, grewBy };
}

describe('a listing larger than the client keeps', () => {
  test('100 pages of 5,000 webhooks: listing_too_large past 10,000 items, the third page the last read', async () => {
    const gateway = await listingGateway(() => repeated(webhook(), 5000));
    const { outcome } = await list(gateway.origin);
    expect(outcome).toBeInstanceOf(GatewayError);
    expect(outcome).toMatchObject({ status: 200, code: 'listing_too_large' });
    expect((outcome as Error).message).toBe(
      'GET /api/v1/webhooks failed (200 listing_too_large): the listing holds more than 10000 items; ' +
        'the client stopped reading.',
    );
    expect(gateway.seen).toHaveLength(3);
  });

  test('100 pages of 4 MiB: listing_too_large once the pages pass maxResponseBytes in all; the heap stays bounded', async () => {
    const gateway = await listingGateway(() => repeated(webhook(4 * MiB), 1));
    const { outcome, grewBy } = await list(gateway.origin);
    expect(outcome).toMatchObject({ status: 200, code: 'listing_too_large' });
    expect((outcome as Error).message).toMatch(
      /^GET \/api\/v1\/webhooks\?cursor=3 failed \(200 listing_too_large\): its pages are longer than maxResponseBytes \(10485760 bytes\) in all/,
    );
    expect(gateway.seen).toHaveLength(3);
    // A sanity bound far from the limit (the 100 pages are 400 MiB), not a measurement.
    expect(grewBy).toBeLessThan(200 * MiB);
  });

  test.each([
    ['{ items } of', false],
    ['a bare array of', true],
  ])('one page, %s 3,400,000 tiny items: listing_too_large, no stack overflow', async (_, bare) => {
    const gateway = await listingGateway(() => repeated('0', 3_400_000), bare);
    const { outcome } = await list(gateway.origin);
    expect(outcome).toMatchObject({ status: 200, code: 'listing_too_large' });
    expect((outcome as Error).message).toMatch(/more than 10000 items/);
    expect(gateway.seen).toHaveLength(1);
  });

  test('a page past the listing bound is not asked for again, even as a 5xx (which a GET retries)', async () => {
    const seen: string[] = [];
    const server = createServer((req, res) => {
      seen.push(req.url!);
      const first = seen.length === 1;
      res.writeHead(first ? 200 : 500, { 'content-type': 'application/json' });
      const page = repeated(webhook(6 * MiB), 1);
      stream(res, ['{"success":true,"data":{"items":[', ...page, '],"next_cursor":"2"}}']);
    });
    servers.push(server);
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    const { outcome } = await list(`http://127.0.0.1:${(server.address() as AddressInfo).port}`);
    expect(outcome).toMatchObject({ status: 500, code: 'listing_too_large' });
    expect(seen).toEqual(['/api/v1/webhooks', '/api/v1/webhooks?cursor=2']);
  });

  test('a listing within both bounds is read whole: 10,000 webhooks on 4 pages', async () => {
    const gateway = await listingGateway((n) => (n <= 4 ? repeated(webhook(), 2500) : []));
    const client = createClient({ apiKey: API_KEY, baseUrl: gateway.origin });
    // Page 5 is empty: the client stops there, as it does at any empty page.
    expect(await client.webhooks.list()).toHaveLength(10_000);
    expect(gateway.seen).toHaveLength(5);
  });
});
