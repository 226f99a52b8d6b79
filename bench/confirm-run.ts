/**
 * `npm run bench:confirm`: the confirm-mode section of `npm run bench` alone, printed (BENCH_QUICK=1
 * for a short run). The full bench writes it into bench/RESULTS.md with the rest.
 */
import { cpSync, rmSync } from 'node:fs';
import { resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

// As run.ts does: measure a snapshot of dist/, next to the compiled bench scripts.
const snapshot = fileURLToPath(new URL('./dist', import.meta.url));
rmSync(snapshot, { recursive: true, force: true });
cpSync(resolve('dist'), snapshot, { recursive: true });
cpSync(resolve('package.json'), fileURLToPath(new URL('./package.json', import.meta.url)));
const { runConfirm, confirmSection } = await import('./confirm.js');

const quick = process.env.BENCH_QUICK === '1';
const results = await runConfirm(
  quick
    ? { rounds: 3, tasks: 200, latencyDeliveries: 50 }
    : { rounds: 5, tasks: 1000, latencyDeliveries: 200 },
);
console.log(confirmSection(results).join('\n'));
