/**
 * `npm run bench`: builds the package, then measures jobhook against the hand-written floor and
 * the libraries users would otherwise pick. Prints the tables and writes bench/RESULTS.md and
 * bench/results.svg. BENCH_QUICK=1 runs everything briefly and only prints (for development; noisy).
 * With valgrind installed it also counts instructions per delivery (bench/instructions.ts).
 * BENCH_BASELINE=<folder holding another build's dist/ and its package.json> also measures that
 * build (the one before a change) beside this one, in the same rounds (bench/NOTES.md: "Before and
 * after").
 */
import { cpSync, existsSync, rmSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { ApartResults } from './builds-apart.js';
import type { Results } from './report.js';

// Others may rebuild (and so empty) dist/ while the bench runs: measure a snapshot of it, taken
// next to the compiled bench scripts, where bench/jobhook.ts (here and in the server processes)
// loads it from. Everything that loads jobhook is imported after the copy.
const snapshot = fileURLToPath(new URL('./dist', import.meta.url));
rmSync(snapshot, { recursive: true, force: true });
cpSync(resolve('dist'), snapshot, { recursive: true });
// The built files import `#runtime`, resolved through the `imports` of the nearest package.json:
// npm run bench copies it before this module loads (static imports resolve first); again here
// for a run started by hand.
cpSync(resolve('package.json'), fileURLToPath(new URL('./package.json', import.meta.url)));
// The build before, snapshotted the same way to `baseline/`, with its own package.json beside its
// dist/ for its `#runtime`; its dependencies resolve from this repository's node_modules.
const baselineFolder = process.env.BENCH_BASELINE;
const baselineSnapshot = fileURLToPath(new URL('./baseline', import.meta.url));
rmSync(baselineSnapshot, { recursive: true, force: true });
if (baselineFolder) {
  for (const file of ['dist/index.js', 'dist/node.js', 'package.json']) {
    if (!existsSync(resolve(baselineFolder, file))) {
      throw new Error(
        `BENCH_BASELINE=${baselineFolder} has no ${file}: give a folder holding a build's dist/ and its package.json`,
      );
    }
  }
  cpSync(resolve(baselineFolder, 'dist'), join(baselineSnapshot, 'dist'), { recursive: true });
  cpSync(resolve(baselineFolder, 'package.json'), join(baselineSnapshot, 'package.json'));
}
const { runCore, runCoreBreakdown } = await import('./core.js');
const { runHandoff } = await import('./handoff.js');
const { runHttp, runMemory } = await import('./http.js');
const { markdown, svg, targets } = await import('./report.js');
const { runBodyScale, runHandlerScale } = await import('./scale.js');
const { BEFORE_KIND, SERVER_KINDS } = await import('./server.js');
const { loadBaseline } = await import('./jobhook.js');
const { runStores } = await import('./stores.js');
const { runReconcile } = await import('./reconcile.js');
const { runBuildsApart } = await import('./builds-apart.js');
const { runInbox, INBOX_QUICK, INBOX_FULL } = await import('./inbox.js');
const { runConfirm } = await import('./confirm.js');
const { runInstructions } = await import('./instructions.js');

const quick = process.env.BENCH_QUICK === '1';
const before = baselineFolder ? await loadBaseline() : undefined;
const core = quick ? { rounds: 7, batchMs: 10, warmupMs: 30 } : { rounds: 41, batchMs: 10, warmupMs: 200 };
const http = quick
  ? { durationS: 1, warmupS: 0.5, rounds: 1, connections: 16 }
  : { durationS: 2, warmupS: 1, rounds: 5, connections: 16 };
const memory = { ...http, durationS: quick ? 2 : 5 };
const handlerCounts = [1, 10, 100, 1000];
const stores = quick
  ? { rounds: 2, deliveries: 300, concurrency: 32 }
  : { rounds: 5, deliveries: 1000, concurrency: 32 };
const handoff = quick
  ? { warmup: 100, rounds: 1, deliveries: 300, concurrency: 32 }
  : { warmup: 6000, rounds: 5, deliveries: 1500, concurrency: 32 };

const startedAt = new Date();
const step = (label: string) =>
  console.error(`bench: ${label} (${((Date.now() - startedAt.getTime()) / 1000).toFixed(0)} s)`);

step('core, per delivery');
const coreResults = await runCore([1024, 64 * 1024, 1_000_000], core, before);
// The 1 KB rows of the build before, again with each build alone in its process (builds-apart.ts).
let apart: ApartResults | undefined;
if (before) {
  step('core, the build before and this one, each in its own process');
  apart = await runBuildsApart(
    { before: join(baselineSnapshot, 'dist'), after: fileURLToPath(new URL('./dist', import.meta.url)) },
    quick ? 2 : 6,
  );
}
step('core, instructions per delivery (valgrind)');
const instructions = await runInstructions(
  quick
    ? { warmup: 1000, deliveries: 500, before: Boolean(before) }
    : { warmup: 12_000, deliveries: 4000, before: Boolean(before) },
);
console.error(`bench: ${instructions.skipped ?? `instructions counted with: ${instructions.command}`}`);
step('core, where the time goes');
const breakdown = await runCoreBreakdown(1024, core);
step('scale, body size');
const body = await runBodyScale([1024, 4096, 16 * 1024, 64 * 1024, 256 * 1024, 1_000_000], core);
step('scale, handlers for other event types');
const handlers = await runHandlerScale(handlerCounts, { ...core, rounds: core.rounds + 2 });
step('HTTP on loopback');
const httpResults = await runHttp(before ? [...SERVER_KINDS, BEFORE_KIND] : SERVER_KINDS, http);
step('memory under sustained load');
const memoryResults = [
  await runMemory('node-jobhook', 64 * 1024, memory),
  await runMemory('node-hand', 64 * 1024, memory),
];
step('shared dedupe stores');
const storeResults = await runStores(stores);
for (const line of storeResults.skipped) console.error(`bench: ${line}`);
step('BullMQ hand-off, end to end');
const handoffResults = await runHandoff(handoff);
for (const line of handoffResults.skipped) console.error(`bench: ${line}`);

step('tracking and reconciliation');
const reconcileResults = await runReconcile(
  quick ? { jobs: 200, rounds: 3, deliveries: 300 } : { jobs: 1000, rounds: 7, deliveries: 1000 },
);
for (const line of reconcileResults.skipped) console.error(`bench: ${line}`);

step('the inbox: added latency and deliveries stored per second');
const inboxResults = await runInbox(quick ? INBOX_QUICK : INBOX_FULL);
for (const line of inboxResults.skipped) console.error(`bench: ${line}`);
step('confirm mode');
const confirmResults = await runConfirm(
  quick
    ? { rounds: 3, tasks: 200, latencyDeliveries: 50 }
    : { rounds: 5, tasks: 1000, latencyDeliveries: 200 },
);

const results: Results = {
  quick,
  settings:
    `core ${core.rounds} interleaved rounds of ~${core.batchMs} ms batches after ${core.warmupMs} ms warm-up per case; ` +
    `HTTP ${http.rounds} interleaved rounds of ${http.durationS} s per server after ${http.warmupS} s warm-up, ` +
    `${http.connections} connections; memory ${memory.durationS} s per server`,
  startedAt,
  baseline: baselineFolder,
  seconds: (Date.now() - startedAt.getTime()) / 1000,
  core: coreResults,
  apart,
  instructions,
  breakdown,
  body,
  handlerCounts,
  handlers,
  http: httpResults,
  memory: memoryResults,
  stores: storeResults,
  handoff: handoffResults,
  reconcile: reconcileResults,
  inbox: inboxResults,
  confirm: confirmResults,
};
const list = targets(results);
const text = markdown(results, list);
console.log(text);
const missed = `${list.filter((t) => !t.met).length} target(s) missed`;
if (quick) {
  // A short run is too noisy to replace the committed results.
  console.error(
    `bench: BENCH_QUICK=1, so bench/RESULTS.md and bench/results.svg are left as they are; ${missed}`,
  );
} else {
  writeFileSync(resolve('bench/RESULTS.md'), text);
  writeFileSync(resolve('bench/results.svg'), svg(list));
  console.error(`bench: wrote bench/RESULTS.md and bench/results.svg; ${missed}`);
}
