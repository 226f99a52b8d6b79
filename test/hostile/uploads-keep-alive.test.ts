// A refusal answered before the body was read to its end, through a keep-alive client (Node's
// own Agent, as proxies and most HTTP clients keep connections): the refusal must reach the
// client, and the next delivery on the same agent must be answered, not left on a connection
// whose unread body stalls it until a time-out resets it (issue 33).
import { Agent } from 'node:http';
import { createReceiver, type Receiver } from 'jobhook';
import { afterEach, describe, expect, test } from 'vitest';
import { LIMIT, SECRET } from '../adapters/fixtures.js';
import type { Running } from '../adapters/http.js';
import { PATH, targets } from '../adapters/targets.js';
import { deliverThrough, EARLY_REFUSALS, postThrough } from './upload.js';

/**
 * Shorter than Node's 5 s, so that a connection stalled by an unread body is reset sooner (Node
 * adds a second); not under 2 s, which the agent would take as too short to reuse the connection.
 */
const KEEP_ALIVE_MS = 2000;
const BODY_TIMEOUT_MS = 300;
const ROUNDS = 5;

function silentReceiver(): { receiver: Receiver; handled: string[] } {
  const handled: string[] = [];
  const receiver = createReceiver({
    secret: SECRET,
    maxBodyBytes: LIMIT,
    bodyTimeoutMs: BODY_TIMEOUT_MS,
    logger: { error: () => undefined, warn: () => undefined },
  });
  receiver.onAny((event) => void handled.push((event as { id: string }).id));
  return { receiver, handled };
}

describe.each(targets)('a keep-alive client after an early refusal: $name', (target) => {
  let server: Running | undefined;
  let agent: Agent | undefined;
  afterEach(async () => {
    agent?.destroy();
    await server?.close();
  });

  test.each(EARLY_REFUSALS)(
    `$name is answered $status, and the next delivery on the same agent 200, ${ROUNDS} times`,
    async (refusal) => {
      const { receiver, handled } = silentReceiver();
      server = await target.start(receiver);
      server.server.keepAliveTimeout = KEEP_ALIVE_MS;
      // One connection at most: the next request goes on the refused one's if it is kept.
      agent = new Agent({ keepAlive: true, maxSockets: 1 });
      const url = `${server.origin}${PATH}`;
      const outcomes: string[] = [];
      for (let round = 0; round < ROUNDS; round++) {
        const refused = await postThrough(agent, url, refusal.headers(), refusal.pieces(), {
          holdLast: 'holdLast' in refusal,
        }).then(
          ({ status, body }) =>
            `${status} ${(JSON.parse(body) as { error?: { code: string } }).error?.code ?? ''}`,
          (error: NodeJS.ErrnoException) => error.code ?? error.message,
        );
        const next = await deliverThrough(agent, url);
        outcomes.push(`${refused} then ${next.error ?? next.status}`);
      }
      const expected = `${refusal.status} ${refusal.code} then 200`;
      console.info(
        `[keep-alive] ${target.name}, ${refusal.name}: ` +
          `${outcomes.filter((outcome) => outcome === expected).length} of ${ROUNDS} rounds ${expected}` +
          ` (${[...new Set(outcomes)].join('; ')})`,
      );
      expect(outcomes).toEqual(outcomes.map(() => expected));
      expect(handled).toHaveLength(ROUNDS);
    },
    // Before the fix each round waited for the keep-alive time-out.
    ROUNDS * (KEEP_ALIVE_MS + 2000),
  );
});
