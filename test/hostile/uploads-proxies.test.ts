// Early refusals behind real reverse proxies (issue 33): nginx with request buffering on (its
// default) and off, Caddy and HAProxy, each keeping its connections to the receiver alive. A
// refusal answered before the body was read to its end must reach the client, and the next valid
// delivery must be answered 200: not 502 from a proxy that reused a connection the unread rest of
// the body had stalled until the server's keep-alive time-out reset it.
import { Agent } from 'node:http';
import { createReceiver } from 'jobhook';
import { afterAll, afterEach, beforeAll, describe, expect, test } from 'vitest';
import { LIMIT, SECRET } from '../adapters/fixtures.js';
import type { Running } from '../adapters/http.js';
import { PATH, targets } from '../adapters/targets.js';
import { PROXIES, proxyAvailable, startProxy, type ReverseProxy } from '../support/reverse-proxies.js';
import { deliverThrough, EARLY_REFUSALS, postThrough } from './upload.js';

const ROUNDS = 10;
/** One per way the answer is written: Node's writer, Fastify's reply, Hono's and the fetch Response. */
const BEHIND_PROXIES = [
  'node http.createServer',
  'fastify 5 plugin, JSON routes beside it',
  'hono app.post on @hono/node-server',
  'receiver.fetch on @hono/node-server',
];
// A body that stalls waits in a buffering proxy and never reaches the receiver: the keep-alive
// client test (uploads-keep-alive.test.ts) covers the time-out.
const REFUSALS = EARLY_REFUSALS.filter((refusal) => !('holdLast' in refusal));

describe.each(PROXIES)('behind $name', (kind) => {
  describe.runIf(proxyAvailable(kind)).each(targets.filter((target) => BEHIND_PROXIES.includes(target.name)))(
    '$name',
    (target) => {
      let server: Running;
      let proxy: ReverseProxy;
      let agent: Agent;
      beforeAll(async () => {
        const receiver = createReceiver({
          secret: SECRET,
          maxBodyBytes: LIMIT,
          logger: { error: () => undefined, warn: () => undefined },
        });
        server = await target.start(receiver);
        proxy = await startProxy(kind, Number(new URL(server.origin).port));
      });
      afterAll(async () => {
        await proxy?.stop();
        await server?.close();
      });
      afterEach(() => agent?.destroy());

      test.each(REFUSALS)(
        `$name is answered $status through the proxy, and the next delivery 200, ${ROUNDS} times`,
        async (refusal) => {
          // A keep-alive client of its own, on one connection to the proxy, as a gateway would keep one.
          agent = new Agent({ keepAlive: true, maxSockets: 1 });
          const url = `${proxy.origin}${PATH}`;
          const outcomes: string[] = [];
          for (let round = 0; round < ROUNDS; round++) {
            const refused = await postThrough(agent, url, refusal.headers(), refusal.pieces()).then(
              ({ status }) => String(status),
              (error: NodeJS.ErrnoException) => error.code ?? error.message,
            );
            const next = await deliverThrough(agent, url);
            outcomes.push(`${refused} then ${next.error ?? next.status}`);
          }
          const expected = `${refusal.status} then 200`;
          console.info(
            `[proxies] ${kind.name}, ${target.name}, ${refusal.name}: ` +
              `${outcomes.filter((outcome) => outcome === expected).length} of ${ROUNDS} rounds ${expected}` +
              ` (${[...new Set(outcomes)].join('; ')})`,
          );
          expect(outcomes).toEqual(outcomes.map(() => expected));
        },
        // Before the fix each round waited for the server's keep-alive time-out (5 s).
        ROUNDS * 10_000,
      );
    },
  );
});
