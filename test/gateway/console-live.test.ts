// The console's event stream on its own (an internal module, imported from the sources): that a
// client that goes away is dropped, and that close() leaves no listener and no stream behind.
import { afterEach, expect, test } from 'vitest';
import { changeSignal } from '../../src/tools/simulator/state.js';
import { liveFeed } from '../../src/tools/simulator/console/live.js';
import { openEvents, serve } from './console-support.js';

const cleanups: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function feedServer() {
  const changes = changeSignal();
  let version = 0;
  const feed = liveFeed({ changes, heartbeatMs: 10_000, coalesceMs: 1 });
  const server = await serve((req, res) => {
    req.resume();
    feed.open(res, () => ({ version }));
  });
  cleanups.push(server.close);
  const bump = () => {
    version++;
    changes.notify();
  };
  return { changes, feed, url: server.url, bump };
}

/** Polls a condition the server side reaches asynchronously (a socket closing), without a fixed sleep. */
async function until(condition: () => boolean) {
  while (!condition()) await new Promise((resolve) => setImmediate(resolve));
}

test('it listens to the simulator only while a client is connected, and drops one that goes away', async () => {
  const { changes, feed, url, bump } = await feedServer();
  expect(changes.listeners).toBe(0);
  const first = await openEvents(url);
  const second = await openEvents(url);
  await first.nextState();
  await second.nextState();
  expect(feed.clients).toBe(2);
  expect(changes.listeners).toBe(1);

  await first.close();
  await until(() => feed.clients === 1);
  bump();
  expect(await second.nextState((s) => s.version === 1)).toEqual({ version: 1 });

  await second.close();
  await until(() => feed.clients === 0);
  expect(changes.listeners).toBe(0);
  bump(); // nobody to write to: nothing happens, nothing throws
});

test('changes in a burst go out as one event', async () => {
  const { url, bump } = await feedServer();
  const events = await openEvents(url);
  cleanups.push(events.close);
  await events.nextState();
  for (let i = 0; i < 20; i++) bump();
  expect(await events.nextState()).toEqual({ version: 20 });
});

test('close() ends every stream, unsubscribes, and refuses new streams (503)', async () => {
  const { changes, feed, url } = await feedServer();
  const events = await openEvents(url);
  await events.nextState();
  feed.close();
  await events.ended();
  expect(feed.clients).toBe(0);
  expect(changes.listeners).toBe(0);
  const late = await fetch(url);
  expect(late.status).toBe(503);
  await late.text();
});
