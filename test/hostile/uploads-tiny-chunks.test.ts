// Bodies at the limit sent in 1-byte chunks through one mounting of each adapter: each is read to
// its end and refused, and the reader's memory stays a small multiple of the limit. Apart from
// uploads.test.ts because a million chunks per upload take seconds: alone, it runs beside the rest.
import { signDelivery } from 'jobhook/testing';
import { afterEach, describe, expect, test } from 'vitest';
import { completed, SECRET } from '../adapters/fixtures.js';
import type { Running } from '../adapters/http.js';
import { PATH, targets } from '../adapters/targets.js';
import { countingReceiver, postValid, tinyChunkUpload } from './upload.js';

const MIB = 1024 * 1024;
const LIMIT = MIB; // the default
/**
 * Two bodies at the limit, each sent in 1-byte chunks, may hold a few times the limit each; one
 * that kept every chunk (each a view of a socket read) held 120 to 230 MiB per upload, so two
 * such uploads pass the bound below as four did, for half the CPU a busy machine has to find.
 */
const TINY_CHUNK_UPLOADS = 2;
// The whole test process's RSS, the uploading client's side included, sampled while the garbage
// collector runs when it likes: on a busy machine Express's peak reached 66 MiB. Before the reader
// coalesced chunks four such uploads peaked at 356 to 1,627 MiB, so the bound still tells.
const TINY_CHUNK_RSS_BOUND = 128 * MIB;
/** The test's bound ends a hang; it is no deadline for the work, which a busy machine slows many times over. */
const HANG_MS = 600_000;

/** One mounting per adapter (and receiver.fetch): a million chunks per upload take seconds each. */
const ONE_PER_ADAPTER = [
  'node http.createServer',
  'express 5 app.post',
  'hono app.post on @hono/node-server',
  'fastify 5 plugin, JSON routes beside it',
  'koa 3 middleware before @koa/bodyparser',
  'receiver.fetch on @hono/node-server',
];

describe.each(targets.filter((target) => ONE_PER_ADAPTER.includes(target.name)))(
  'tiny chunks: $name',
  (target) => {
    let server: Running | undefined;
    afterEach(() => server?.close());

    test(
      'two unsigned uploads at the limit, sent at once in 1-byte chunks, hold a small multiple of the limit',
      async () => {
        // No body deadline: a million chunks each take minutes on a busy machine, and must be read to the end.
        const { receiver, calls } = countingReceiver({ bodyTimeoutMs: 0 });
        server = await target.start(receiver);
        // Signed for another body: the header checks pass, so each body is read, then refused.
        const { headers } = signDelivery({ secret: SECRET, payload: completed() });
        const before = process.memoryUsage().rss;
        let peak = before;
        const sample = () => (peak = Math.max(peak, process.memoryUsage().rss));
        const sampler = setInterval(sample, 5);
        const statuses = await Promise.all(
          Array.from({ length: TINY_CHUNK_UPLOADS }, () =>
            tinyChunkUpload(`${server!.origin}${PATH}`, headers, LIMIT),
          ),
        ).finally(() => clearInterval(sampler));
        sample();
        console.info(
          `[uploads] ${target.name}, ${TINY_CHUNK_UPLOADS} uploads of 1 MiB in 1-byte chunks at once: ` +
            `statuses ${statuses.join(', ')}, peak rss +${((peak - before) / MIB).toFixed(1)} MiB`,
        );
        expect(statuses).toEqual(statuses.map(() => 401));
        expect(calls).toEqual([]);
        expect(peak - before).toBeLessThan(TINY_CHUNK_RSS_BOUND);
        expect(await postValid(server.origin)).toBe(200);
      },
      HANG_MS,
    );
  },
);
