/**
 * The hand-off section alone, for working on one engine: `npm run bench:handoff -- pgboss` builds
 * the package and the bench as `npm run bench` does, then runs `runHandoff` for the baseline and
 * the setups named (default all: handoff, pgboss, nats) and prints the section's table. It writes
 * nothing: bench/RESULTS.md comes from the whole `npm run bench` only. BENCH_QUICK=1 runs one
 * short round.
 */
import { cpSync, rmSync } from 'node:fs';
import { resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

// The same snapshot of dist/ as run.ts takes (see there): loaded by bench/jobhook.ts.
const snapshot = fileURLToPath(new URL('./dist', import.meta.url));
rmSync(snapshot, { recursive: true, force: true });
cpSync(resolve('dist'), snapshot, { recursive: true });
cpSync(resolve('package.json'), fileURLToPath(new URL('./package.json', import.meta.url)));
const { runHandoff, SETUPS } = await import('./handoff.js');
const { handoffSection } = await import('./report.js');

const named = process.argv.slice(2);
for (const name of named) {
  if (!(SETUPS as readonly string[]).includes(name) || name === 'inline') {
    throw new Error(`bench:handoff: unknown setup ${name} (one of ${SETUPS.slice(1).join(', ')})`);
  }
}
const setups = named.length > 0 ? ['inline' as const, ...(named as (typeof SETUPS)[number][])] : undefined;
const quick = process.env.BENCH_QUICK === '1';
const results = await runHandoff({
  ...(quick
    ? { warmup: 100, rounds: 1, deliveries: 300, concurrency: 32 }
    : { warmup: 3000, rounds: 3, deliveries: 1500, concurrency: 32 }),
  ...(setups ? { setups } : {}),
});
for (const line of results.skipped) console.error(`bench: ${line}`);
console.log(handoffSection(results).join('\n'));
