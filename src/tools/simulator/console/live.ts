import type { ServerResponse } from 'node:http';
import type { ChangeSignal } from '../state.js';

export interface LiveFeedOptions {
  changes: ChangeSignal;
  /** A comment line this often keeps proxies and the browser from timing the stream out. */
  heartbeatMs: number;
  /** Changes within this long go out as one event: a burst of attempts is one render, not fifty. */
  coalesceMs?: number;
  /** Open streams at most; one more is answered 503. */
  maxClients?: number;
}

/**
 * The console's server-sent events: the whole state at once, again after each change (coalesced),
 * heartbeats in between. It holds a listener and timers only while a client is connected.
 */
export function liveFeed({ changes, heartbeatMs, coalesceMs = 50, maxClients = 32 }: LiveFeedOptions) {
  // Each client with the data of its `state` events (its account's), read afresh when sent.
  const clients = new Map<ServerResponse, () => unknown>();
  let unsubscribe: (() => void) | undefined;
  let heartbeat: NodeJS.Timeout | undefined;
  let pending: NodeJS.Timeout | undefined;
  let closed = false;

  const stateEvent = (snapshot: () => unknown) => `event: state\ndata: ${JSON.stringify(snapshot())}\n\n`;

  function broadcast(frame: (snapshot: () => unknown) => string) {
    for (const [client, snapshot] of clients) client.write(frame(snapshot));
  }

  function changed() {
    pending ??= setTimeout(() => {
      pending = undefined;
      broadcast(stateEvent);
    }, coalesceMs);
  }

  function drop(client: ServerResponse) {
    if (!clients.delete(client) || clients.size > 0) return;
    unsubscribe?.();
    unsubscribe = undefined;
    clearInterval(heartbeat);
    heartbeat = undefined;
    clearTimeout(pending);
    pending = undefined;
  }

  return {
    /** Answers a GET of the events endpoint with a stream of `snapshot`'s data that stays open. */
    open(res: ServerResponse, snapshot: () => unknown): void {
      if (closed || clients.size >= maxClients) {
        res.writeHead(503, { 'content-type': 'text/plain; charset=utf-8', 'retry-after': '5' });
        res.end('Too many open console streams.\n');
        return;
      }
      res.writeHead(200, {
        'content-type': 'text/event-stream; charset=utf-8',
        'cache-control': 'no-store',
        connection: 'keep-alive',
        'x-accel-buffering': 'no',
        'x-content-type-options': 'nosniff',
      });
      // `retry`: how long the browser's EventSource waits before it reconnects on its own.
      res.write(`retry: 1000\n\n${stateEvent(snapshot)}`);
      clients.set(res, snapshot);
      if (clients.size === 1) {
        unsubscribe = changes.subscribe(changed);
        heartbeat = setInterval(() => broadcast(() => ': heartbeat\n\n'), heartbeatMs);
        heartbeat.unref();
      }
      // The response's 'close' means the client went away; the request's fires once its body is read.
      res.on('close', () => drop(res));
      res.on('error', () => drop(res));
    },
    /** How many streams are open. */
    get clients(): number {
      return clients.size;
    },
    close(): void {
      closed = true;
      for (const client of [...clients.keys()]) {
        drop(client);
        client.end();
      }
    },
  };
}

export type LiveFeed = ReturnType<typeof liveFeed>;
