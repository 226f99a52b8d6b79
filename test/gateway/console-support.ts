// Shared by the console tests (with and without a browser): a real receiver app, and a reader of
// the console's server-sent events over fetch.
import { createServer, type RequestListener } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createReceiver } from 'jobhook';
import { nodeHandler } from 'jobhook/node';
import type { Json } from './support.js';
import { SECRET } from '../fixtures.js';

export { SECRET };

/** A listening HTTP server; `close()` ends it at once. */
export async function serve(listener: RequestListener) {
  const server = createServer(listener);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** The documented receiver (createReceiver + nodeHandler) at `<url>/webhooks`. */
export async function startReceiverApp() {
  const receiver = createReceiver({ secret: SECRET });
  // With no handler there is nothing to run twice, and the receiver answers 200 without deduping.
  receiver.onJobCompleted(() => undefined).onJobFailed(() => undefined);
  const app = await serve(nodeHandler(receiver, { path: '/webhooks' }));
  return { url: `${app.url}/webhooks`, close: app.close };
}

/** One parsed server-sent event, or a comment line (`comment`). */
export type SseItem = { event: string; data: Json } | { comment: string };

/**
 * Opens `url` as an event stream and hands out what arrives: `next(match)` resolves with the first
 * item not yet handed out that matches, so a test awaits a state instead of sleeping.
 */
export async function openEvents(url: string) {
  const controller = new AbortController();
  const response = await fetch(url, { signal: controller.signal, headers: { accept: 'text/event-stream' } });
  const items: SseItem[] = [];
  const waiters = new Set<() => void>();
  let ended = false;
  const reading = (async () => {
    const decoder = new TextDecoder();
    let buffer = '';
    try {
      for await (const chunk of response.body as unknown as AsyncIterable<Uint8Array>) {
        buffer += decoder.decode(chunk, { stream: true });
        let end: number;
        while ((end = buffer.indexOf('\n\n')) !== -1) {
          const block = buffer.slice(0, end);
          buffer = buffer.slice(end + 2);
          for (const item of parse(block)) items.push(item);
        }
        for (const wake of waiters) wake();
      }
    } catch {
      // aborted by the test
    } finally {
      ended = true;
      for (const wake of waiters) wake();
    }
  })();

  let handedOut = 0;
  return {
    response,
    items,
    /** The next item (after those already returned) for which `match` is true. */
    async next(match: (item: SseItem) => boolean = () => true): Promise<SseItem> {
      for (;;) {
        while (handedOut < items.length) {
          const item = items[handedOut++]!;
          if (match(item)) return item;
        }
        if (ended) throw new Error('the event stream ended');
        await new Promise<void>((resolve) => {
          const wake = () => {
            waiters.delete(wake);
            resolve();
          };
          waiters.add(wake);
        });
      }
    },
    /** The next `state` event whose data passes `match`. */
    async nextState(match: (state: Json) => boolean = () => true): Promise<Json> {
      const item = await this.next((i) => 'event' in i && i.event === 'state' && match(i.data));
      return (item as { data: Json }).data;
    },
    /** Resolves once the server has ended the stream. */
    ended: () => reading,
    close: async () => {
      controller.abort();
      await reading;
    },
  };
}

function parse(block: string): SseItem[] {
  const out: SseItem[] = [];
  let event = 'message';
  const data: string[] = [];
  for (const line of block.split('\n')) {
    if (line.startsWith(':')) out.push({ comment: line.slice(1).trim() });
    else if (line.startsWith('event:')) event = line.slice(6).trim();
    else if (line.startsWith('data:')) data.push(line.slice(5).replace(/^ /, ''));
  }
  if (data.length > 0) out.push({ event, data: JSON.parse(data.join('\n')) });
  return out;
}
