// What the probe's listener holds is bounded whoever sends to it: 8 MiB of deliveries kept and 16
// connections at a time. A stranger's flood beyond either is dropped, and a probe flooded while it
// submits its job still finishes with what the gateway sent.
import { once } from 'node:events';
import { connect, type Socket } from 'node:net';
import { createClient, type GatewayClient } from 'jobhook/client';
import { startGateway } from 'jobhook/testing';
import { afterEach, describe, expect, it } from 'vitest';
import { startListener, type ProbeListener } from '../../src/tools/probe/listener.js';
import { runProbe } from '../../src/tools/probe/probe.js';

const closers: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const close of closers.splice(0).reverse()) await close();
});

const MAX_KEPT_BYTES = 8 * 1024 * 1024;
const MAX_CONNECTIONS = 16;
/** A body under the 256 KiB a request may carry: 41 of them are more than the 8 MiB kept. */
const BODY_BYTES = 200 * 1024;

const post = (url: string, body: string) =>
  fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body });

/** A JSON body of `bytes` bytes, numbered. */
const bulky = (n: number, bytes = BODY_BYTES) => {
  const head = `{"n":${n},"pad":"`;
  return `${head}${'x'.repeat(bytes - head.length - 2)}"}`;
};

/** A connection that sent part of a request's head and waits: it holds its place. */
async function held(url: string): Promise<Socket> {
  const { hostname, port } = new URL(url);
  const socket = connect(Number(port), hostname);
  // Reset by the listener when it closes, or when a flood has no room: ends it all the same.
  socket.on('error', () => undefined);
  await once(socket, 'connect');
  socket.write('POST / HTTP/1.1\r\nhost: probe\r\ncontent-type: application/json\r\n');
  return socket;
}

/** Whether a connection made now gets an answer to a whole request, or is closed unanswered. */
async function answered(url: string): Promise<boolean> {
  const { hostname, port } = new URL(url);
  const socket = connect(Number(port), hostname);
  let data = '';
  socket.on('data', (chunk: Buffer) => (data += chunk.toString()));
  // Closed unanswered, it is reset: `close` comes after the `error`.
  const closed = new Promise((resolve) => socket.on('close', resolve));
  socket.on('error', () => undefined);
  socket.write('POST / HTTP/1.1\r\nhost: probe\r\ncontent-length: 2\r\nconnection: close\r\n\r\n{}');
  await closed;
  return data.startsWith('HTTP/1.1 200');
}

async function listening(): Promise<ProbeListener> {
  const listener = await startListener({ host: '127.0.0.1', port: 0, answer: () => 200 });
  closers.push(() => listener.close());
  return listener;
}

describe("the probe's listener", () => {
  it('keeps at most 8 MiB of deliveries; the rest are answered and dropped', async () => {
    const listener = await listening();
    for (let n = 0; n < 60; n++) expect((await post(listener.url, bulky(n))).status).toBe(200);
    const kept = listener.deliveries.reduce((total, delivery) => total + delivery.body.byteLength, 0);
    expect(kept).toBeLessThanOrEqual(MAX_KEPT_BYTES);
    expect(listener.deliveries).toHaveLength(Math.floor(MAX_KEPT_BYTES / BODY_BYTES));
    // The first ones are kept, not the last: what came first is what the probe looks at.
    expect(JSON.parse(Buffer.from(listener.deliveries[0]!.body).toString()).n).toBe(0);
  });

  it('holds 16 connections at a time: one more is closed unanswered, and served once one ends', async () => {
    const listener = await listening();
    const sockets = await Promise.all(Array.from({ length: MAX_CONNECTIONS }, () => held(listener.url)));
    expect(await answered(listener.url)).toBe(false);
    for (const socket of sockets) socket.destroy();
    // The listener learns of the ends as they come: a connection is served once it has.
    while (!(await answered(listener.url)));
    expect((await post(listener.url, '{}')).status).toBe(200);
  });
});

it('a probe flooded while it submits (8 MiB and more of POSTs, 40 connections at once) still finishes', async () => {
  const gateway = await startGateway({ jobs: { auto: false }, deliveries: { retryDelaysMs: [] } });
  closers.push(() => gateway.close());
  const client = createClient({ baseUrl: gateway.baseUrl, apiKey: gateway.apiKey });
  let url = '';
  // While the submission is answered, the listener keeps what comes (the job's delivery may come
  // first): a stranger's flood then, which the probe drops once it knows its task id.
  const images = Object.create(client.images) as GatewayClient['images'];
  images.generate = async (...args: Parameters<GatewayClient['images']['generate']>) => {
    const submitted = await client.images.generate(...args);
    // 40 of 200 KiB and one of the 192 KiB left fill the 8 MiB to the byte; 19 more are dropped.
    for (let n = 0; n < 60; n++) {
      const room = MAX_KEPT_BYTES - 40 * BODY_BYTES;
      expect((await post(url, bulky(n, n === 40 ? room : BODY_BYTES))).status).toBe(200);
    }
    const sockets = await Promise.all(Array.from({ length: MAX_CONNECTIONS }, () => held(url)));
    const more = await Promise.all(Array.from({ length: 24 }, () => answered(url)));
    expect(more.every((served) => !served)).toBe(true);
    for (const socket of sockets) socket.destroy();
    // The job runs once the listener serves again: its delivery is sent once, never retried.
    while (!(await answered(url)));
    gateway.advanceJob(submitted.task_id);
    gateway.advanceJob(submitted.task_id);
    return submitted;
  };
  const flooded = Object.assign(Object.create(client) as GatewayClient, { images });
  const report = await runProbe({
    client: flooded,
    baseUrl: gateway.baseUrl,
    timeoutMs: 30_000,
    progress: (line) => (url = /^Listening at (\S+);/.exec(line)?.[1] ?? url),
  });
  expect(report.signature.scheme).toBe('standard-webhooks');
  expect(report.check).toMatchObject({ completed: 'handled', forgedRefused: true });
  expect(report.retries.attempts).toBe(1);
  expect(report.probe.webhookDeleted).toBe(true);
  expect(await client.webhooks.list()).toEqual([]);
});
