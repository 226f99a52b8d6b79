// The quarantine under a flood of forged deliveries, through a real receiver over HTTP (the Node
// adapter on 127.0.0.1), the same suite on every inbox (`quarantineFlood(target)` in a test file):
// whatever the flood, the refused deliveries kept stay within their bounds (docs/inbox.md: the count
// and the bytes, each passed by at most the 64 deliveries between two trims), the oldest go first,
// and the genuine deliveries sent among them are all stored and handled once. With the defaults, a
// flood of 1 MiB forged bodies (more than the 64 MiB cap) leaves the quarantine within its bounds,
// and the bytes it takes on disk too.
import { randomBytes, randomUUID } from 'node:crypto';
import { once } from 'node:events';
import { createServer } from 'node:http';
import { setTimeout as sleep } from 'node:timers/promises';
import { createReceiver } from 'jobhook';
import type { DedupeStore, Inbox, InboxOptions, StoredDelivery } from 'jobhook/extend';
import { nodeHandler } from 'jobhook/node';
import { signDelivery } from 'jobhook/testing';
import { expect, it } from 'vitest';
import { completedPayload, SECRET } from '../fixtures.js';

const FORGER = `whsec_${Buffer.from('a-forger-s-own-secret-0123456789').toString('base64')}`;
export const MIB = 1024 * 1024;
/** Refused deliveries stored between two trims of the quarantine (docs/inbox.md). */
const BETWEEN_TRIMS = 64;
const quiet = { warn: () => undefined, error: () => undefined };

export interface FloodTarget {
  make(
    options?: InboxOptions,
  ): Promise<{ inbox: Inbox; dedupe: DedupeStore; diskBytes: () => Promise<number> }>;
}

interface FloodOptions {
  forged: number;
  genuineEvery?: number;
  padding?: () => string;
  concurrency?: number;
}

type Post = (delivery: {
  headers: Record<string, string>;
  body: string | Uint8Array<ArrayBuffer>;
}) => Promise<number>;

/** What a delivery takes in the quarantine: its body and its headers (docs/inbox.md). */
const sizeOf = (row: StoredDelivery) => row.body.byteLength + JSON.stringify(row.headers).length;
const bytesOf = (rows: StoredDelivery[]) => rows.reduce((sum, row) => sum + sizeOf(row), 0);
/** The payload's id, read back from a kept body. */
export const idOf = (row: StoredDelivery) =>
  (JSON.parse(new TextDecoder().decode(row.body)) as { id: string }).id;

/** A receiver with `inbox`, served over HTTP: `post` sends one delivery and resolves with its status. */
export async function served(inbox: Inbox, dedupe: DedupeStore) {
  const receiver = createReceiver({ secret: SECRET, inbox, dedupe, logger: quiet, bodyTimeoutMs: 0 });
  const handled: string[] = [];
  receiver.onJobCompleted((event) => void handled.push(event.id));
  const server = createServer(nodeHandler(receiver, { path: '/webhooks' }));
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as { port: number };
  const post: Post = async (delivery) => {
    const response = await fetch(`http://127.0.0.1:${port}/webhooks`, { method: 'POST', ...delivery });
    await response.arrayBuffer();
    return response.status;
  };
  /** Waits for the quarantine's writes in flight (close() waits for them), then stops serving. */
  const close = async () => {
    await receiver.close();
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  };
  return { handled, post, close };
}

/**
 * Sends `forged` forged deliveries, `concurrency` at a time, a genuine one after every
 * `genuineEvery`, each answered as it should be (401, 200); resolves with the forged ids in the
 * order sent and the genuine events' ids.
 */
export async function flood(
  post: Post,
  { forged, genuineEvery = Infinity, padding = () => '', concurrency = 4 }: FloodOptions,
) {
  const forgedIds: string[] = [];
  const genuineIds: string[] = [];
  let next = 1;
  const sender = async () => {
    while (next <= forged) {
      const n = next++;
      const payload = completedPayload({ id: `evt_forged_${randomUUID()}`, padding: padding() });
      forgedIds.push(payload.id);
      expect(await post(signDelivery({ secret: FORGER, payload }))).toBe(401);
      if (n % genuineEvery === 0) {
        const genuine = completedPayload({ id: `evt_${randomUUID()}` });
        genuineIds.push(genuine.id);
        expect(await post(signDelivery({ secret: SECRET, payload: genuine }))).toBe(200);
      }
    }
  };
  await Promise.all(Array.from({ length: concurrency }, sender));
  return { forgedIds, genuineIds };
}

/** Resolves once nothing stored waits to run: every genuine delivery stored has run and settled. */
async function settled(inbox: Inbox) {
  while ((await inbox.list({ status: 'pending', limit: 1 })).length > 0) await sleep(10);
}

/** The refused deliveries kept, oldest first. */
const quarantined = (inbox: Inbox) => inbox.list({ status: 'refused', limit: 100_000 });

/**
 * Oldest out first: the inbox's ids count up as it writes, so every row it wrote after the oldest
 * refused delivery still kept is still there (a trim deletes from the oldest up, never a genuine row).
 */
async function expectOldestOut(inbox: Inbox) {
  const rows = await inbox.list({ limit: 100_000 });
  const ids = rows.map((row) => Number(row.id));
  const oldestKept = Math.min(...rows.filter((row) => row.status === 'refused').map((row) => Number(row.id)));
  expect(ids.filter((id) => id >= oldestKept)).toHaveLength(Math.max(...ids) - oldestKept + 1);
}

/** Every genuine delivery sent in the flood is stored, settled and its event handled once. */
async function expectGenuineHandled(inbox: Inbox, handled: string[], genuineIds: string[]) {
  const stored = await inbox.list({ status: 'handled', limit: 100_000 });
  expect(stored.map(idOf).sort()).toEqual([...genuineIds].sort());
  expect([...handled].sort()).toEqual([...genuineIds].sort());
}

export function quarantineFlood(target: FloodTarget) {
  it('holds the count cap, oldest out first; every genuine delivery is stored and handled once', async () => {
    const maxCount = 20;
    const { inbox, dedupe } = await target.make({ quarantine: { maxCount } });
    const { post, handled, close } = await served(inbox, dedupe);
    const { genuineIds } = await flood(post, { forged: 200, genuineEvery: 20 });
    await settled(inbox);
    await close();

    const kept = await quarantined(inbox);
    expect(kept.length).toBeGreaterThanOrEqual(maxCount);
    expect(kept.length).toBeLessThanOrEqual(maxCount + BETWEEN_TRIMS);
    await expectOldestOut(inbox);
    // Trimmed (as once a minute): the cap exactly, the newest of what was kept.
    await inbox.prune();
    await expectOldestOut(inbox);
    const trimmed = await quarantined(inbox);
    expect(trimmed.map((row) => row.id)).toEqual(kept.slice(-maxCount).map((row) => row.id));
    await expectGenuineHandled(inbox, handled, genuineIds);
  });

  it('holds the byte cap, oldest out first; every genuine delivery is stored and handled once', async () => {
    const maxBytes = 64 * 1024;
    const { inbox, dedupe } = await target.make({ quarantine: { maxBytes } });
    const { post, handled, close } = await served(inbox, dedupe);
    // About 2.5 KiB each, headers included: some 250 KiB in all, four times the cap.
    const { genuineIds } = await flood(post, {
      forged: 100,
      genuineEvery: 10,
      padding: () => 'x'.repeat(2048),
    });
    await settled(inbox);
    await close();

    const kept = await quarantined(inbox);
    const largest = Math.max(...kept.map(sizeOf));
    expect(bytesOf(kept)).toBeLessThanOrEqual(maxBytes + BETWEEN_TRIMS * largest);
    await expectOldestOut(inbox);
    await inbox.prune();
    await expectOldestOut(inbox);
    const trimmed = await quarantined(inbox);
    expect(bytesOf(trimmed)).toBeLessThanOrEqual(maxBytes);
    // As many of the newest as fit: one more would not.
    expect(bytesOf(trimmed) + largest).toBeGreaterThan(maxBytes);
    expect(trimmed.map((row) => row.id)).toEqual(kept.slice(-trimmed.length).map((row) => row.id));
    await expectGenuineHandled(inbox, handled, genuineIds);
  });
}

/** The defaults, against a flood of the largest forged deliveries; a file of its own per inbox, for its time. */
export function quarantineDefaults(target: FloodTarget) {
  it('with the defaults, 100 MiB of forged deliveries leave at most 64 MiB and the 64 between trims, on disk too', async () => {
    const { inbox, dedupe, diskBytes } = await target.make();
    const { post, handled, close } = await served(inbox, dedupe);
    const before = await diskBytes();
    // 100 bodies of 1 MiB (the body limit), random so that no engine keeps them compressed.
    const padding = () =>
      randomBytes(768 * 1024)
        .toString('base64')
        .slice(0, MIB - 4096);
    const { forgedIds, genuineIds } = await flood(post, { forged: 100, genuineEvery: 25, padding });
    await settled(inbox);
    await close();

    const cap = 64 * MIB;
    const kept = await quarantined(inbox);
    const largest = Math.max(...kept.map(sizeOf));
    expect(bytesOf(kept)).toBeLessThanOrEqual(cap + BETWEEN_TRIMS * largest);
    await expectOldestOut(inbox);
    await inbox.prune();
    await expectOldestOut(inbox);
    const trimmed = await quarantined(inbox);
    expect(bytesOf(trimmed)).toBeLessThanOrEqual(cap);
    // What the flood took on disk, at its largest: the cap, the 64 between trims, and the engine's
    // own overhead (pages, indexes, the WAL), a few MiB.
    const onDisk = (await diskBytes()) - before;
    console.info(
      `${forgedIds.length} forged deliveries of ${(largest / MIB).toFixed(2)} MiB: ${kept.length} kept ` +
        `(${(bytesOf(kept) / MIB).toFixed(1)} MiB), ${trimmed.length} after a trim; ` +
        `${(onDisk / MIB).toFixed(1)} MiB more on disk`,
    );
    expect(onDisk).toBeLessThanOrEqual(cap + BETWEEN_TRIMS * largest + 16 * MIB);
    await expectGenuineHandled(inbox, handled, genuineIds);
  });
}
