// Two receiver processes with an inbox on one SQLite file (as pm2 or node:cluster run them), as
// sqlite-two-processes.test.ts runs them with a dedupe store alone: each of 500 events is delivered
// to both, as two webhooks of one gateway would, each delivery sent until it is answered 2xx. Both
// store it; the inbox leases each stored delivery to one of them, and the dedupe store on the same
// file lets one of the two deliveries of an event run. Each event must run once, none be lost, and
// every delivery stored end handled (run, or a duplicate of its twin).
import { randomUUID } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { sqliteInbox } from 'jobhook/sqlite';
import { signDelivery } from 'jobhook/testing';
import { expect, it } from 'vitest';
import { completedPayload, SECRET } from '../fixtures.js';
import { pool } from '../support/traffic.js';
import { startChild, stopChild, type Child } from './processes.js';

const EVENTS = 500;
/** With no progress for this long, whatever has not run is lost: the test says which. */
const STALLED_MS = 60_000;

it('runs each of 500 events delivered to both of two processes sharing one inbox file once', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'jobhook-inbox-two-'));
  const path = join(dir, 'jobhook.db');
  const runsFile = join(dir, 'runs.txt');
  writeFileSync(runsFile, '');
  // The default lease (30 s): no process is killed here, so no lease should ever lapse.
  const env = { ENGINE: 'sqlite', DB_PATH: path, SECRET, RUNS_FILE: runsFile, LEASE_MS: '30000' };
  const children: Child[] = [];
  try {
    for (let n = 0; n < 2; n++) children.push(await startChild('../inbox/receiver-process.ts', env));
    const ports = children.map((child) => Number(child.readyLine.split(' ')[1]));
    const events = Array.from({ length: EVENTS }, () => completedPayload({ id: `evt_${randomUUID()}` }));

    const deliver = async (port: number, payload: Record<string, unknown>) => {
      // One webhook's delivery of the event: its own delivery id, retried until a 2xx.
      const { headers, body } = signDelivery({ secret: SECRET, payload });
      for (;;) {
        try {
          const answer = await fetch(`http://127.0.0.1:${port}/webhooks`, { method: 'POST', headers, body });
          await answer.arrayBuffer();
          if (answer.ok) return;
        } catch {
          // A busy machine can drop a connection: the gateway retries, as here.
        }
        await sleep(20);
      }
    };
    await pool(events, 16, async (payload) => {
      await Promise.all(ports.map((port) => deliver(port, payload)));
    });

    // Every delivery was answered 2xx, so stored: wait for each event to run, and for every stored
    // delivery to settle, on a connection of the test's own.
    const inbox = sqliteInbox({ path });
    const runs = new Map<string, string[]>();
    const readRuns = () => {
      runs.clear();
      for (const line of readFileSync(runsFile, 'utf8').split('\n')) {
        if (line === '') continue;
        const [id = '', pid = ''] = line.split(' ');
        runs.set(id, [...(runs.get(id) ?? []), pid]);
      }
    };
    let progress = { seen: -1, at: Date.now() };
    for (;;) {
      readRuns();
      const open = await inbox.list({ status: 'pending', limit: 1 });
      if (runs.size === EVENTS && open.length === 0) break;
      if (runs.size !== progress.seen) progress = { seen: runs.size, at: Date.now() };
      if (Date.now() - progress.at > STALLED_MS) break;
      await sleep(50);
    }

    const lost = events.filter((event) => !runs.has(event.id)).map((event) => event.id);
    const twice = [...runs].filter(([, pids]) => pids.length > 1);
    const stderr = children.map((child) => child.stderr()).join('\n');
    expect(lost, `events lost; the processes said: ${stderr}`).toEqual([]);
    expect(twice, `events run more than once; the processes said: ${stderr}`).toEqual([]);
    const byPid: Record<string, number> = {};
    for (const [pid] of runs.values()) byPid[pid!] = (byPid[pid!] ?? 0) + 1;
    console.info(
      `two processes on one inbox file: ${EVENTS} events run once, by pid ${JSON.stringify(byPid)}`,
    );
    // Both processes ran some: they share the work, not only the file.
    expect(Object.keys(byPid).sort()).toEqual(children.map((child) => String(child.process.pid)).sort());
    // Two stored deliveries per event, every one settled as handled (one ran, its twin a duplicate).
    const stored = await inbox.list({ limit: 10 * EVENTS });
    expect(stored).toHaveLength(2 * EVENTS);
    expect(
      stored.filter((row) => row.status !== 'handled').map((row) => [row.id, row.status, row.reason]),
    ).toEqual([]);
  } finally {
    for (const child of children) await stopChild(child, 'SIGKILL');
    rmSync(dir, { recursive: true, force: true });
  }
}, 240_000);
