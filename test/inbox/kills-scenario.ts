// The SIGKILL scenario of the inbox, on any engine: 1,000 deliveries sent to a receiver process
// (receiver-process.ts) as a gateway sends them (16 at a time, each retried until a 2xx), the
// receiver killed with SIGKILL at three random points and started again each time. Then every
// event must have run, and an event run more than once only by a process that was killed: the
// one place a second run is allowed, between a handler's side effect and the record that it ran.
import { randomUUID } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import { signDelivery } from 'jobhook/testing';
import { expect } from 'vitest';
import { completedPayload, SECRET } from '../fixtures.js';
import { startChild, stopChild, type Child } from '../many-instances/processes.js';

export const DELIVERIES = 1000;
const CONCURRENCY = 16;
const KILLS = 3;

export interface KillsResult {
  /** How often each event ran, by pid. */
  runs: Map<string, number[]>;
  killed: Set<number>;
}

export async function sigkillScenario(env: Record<string, string>, runsFile: string): Promise<KillsResult> {
  writeFileSync(runsFile, '');
  const childEnv = { ...env, SECRET, RUNS_FILE: runsFile };
  const start = () => startChild('../inbox/receiver-process.ts', childEnv);
  let child: Child = await start();
  let port = Number(child.readyLine.split(' ')[1]);
  const killed = new Set<number>();
  const all: Child[] = [child];

  const events = Array.from({ length: DELIVERIES }, () => completedPayload({ id: `evt_${randomUUID()}` }));
  // Three distinct points among the deliveries, away from the ends so that each kill finds work.
  const killAt = new Set<number>();
  while (killAt.size < KILLS) killAt.add(100 + Math.floor(Math.random() * (DELIVERIES - 200)));
  // Kills run one after another: two senders reaching kill points during one restart would
  // otherwise both kill the same process and count one kill.
  let restarting: Promise<void> | undefined;
  let lastRestart: Promise<void> = Promise.resolve();

  async function killAndRestart() {
    const victim = child;
    killed.add(victim.process.pid!);
    await stopChild(victim, 'SIGKILL');
    child = await start();
    all.push(child);
    port = Number(child.readyLine.split(' ')[1]);
  }

  async function deliver(payload: Record<string, unknown>) {
    const { headers, body } = signDelivery({ secret: SECRET, payload });
    for (;;) {
      if (restarting) await restarting;
      try {
        const answer = await fetch(`http://127.0.0.1:${port}/webhooks`, { method: 'POST', headers, body });
        await answer.arrayBuffer();
        if (answer.ok) return;
      } catch {
        // The receiver was killed mid-request: the gateway retries, as here.
      }
      await sleep(20);
    }
  }

  let next = 0;
  async function sender() {
    while (next < events.length) {
      const at = next++;
      if (killAt.has(at)) {
        const restart = lastRestart.then(killAndRestart);
        lastRestart = restarting = restart;
        await restart;
        if (restarting === restart) restarting = undefined;
      }
      await deliver(events[at]!);
    }
  }
  try {
    await Promise.all(Array.from({ length: CONCURRENCY }, sender));
    const runs = new Map<string, number[]>();
    // Every delivery was answered 2xx: each must now run, from the inbox of the last process; one
    // that has not after 30 s without progress is lost, and checkRuns says which.
    let seen = 0;
    let progressAt = Date.now();
    while (Date.now() - progressAt < 30_000) {
      runs.clear();
      for (const line of readFileSync(runsFile, 'utf8').split('\n')) {
        if (line === '') continue;
        const [id, pid] = line.split(' ');
        runs.set(id!, [...(runs.get(id!) ?? []), Number(pid)]);
      }
      if (events.every((event) => runs.has(event.id))) break;
      if (runs.size > seen) [seen, progressAt] = [runs.size, Date.now()];
      await sleep(100);
    }
    return { runs, killed };
  } finally {
    for (const each of all) await stopChild(each, 'SIGKILL');
  }
}

/** No outcome lost; a second run only where the first run's process was killed before recording it. */
export function checkRuns({ runs, killed }: KillsResult): void {
  expect(runs.size, 'events that never ran').toBe(DELIVERIES);
  const unexplained = [...runs].filter(([, pids]) => pids.slice(0, -1).some((pid) => !killed.has(pid)));
  expect(unexplained).toEqual([]);
  expect(killed.size).toBe(KILLS);
  const twice = [...runs.values()].filter((pids) => pids.length > 1).length;
  console.info(
    `${twice} of ${DELIVERIES} events ran more than once, each time first in a process killed then`,
  );
}
