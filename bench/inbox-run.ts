/**
 * The inbox section alone: `npm run bench:inbox` builds the package and the bench as `npm run
 * bench` does, then runs `runInbox` and prints the section's table and its two targets. It writes
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
const { runInbox, inboxSection, inboxTargets, INBOX_FULL, INBOX_QUICK } = await import('./inbox.js');

const results = await runInbox(process.env.BENCH_QUICK === '1' ? INBOX_QUICK : INBOX_FULL);
for (const line of results.skipped) console.error(`bench: ${line}`);
console.log(inboxSection(results).join('\n'));
for (const t of inboxTargets(results)) {
  console.log(`- ${t.name}: ${t.text!.value} (target ${t.op} ${t.text!.bound}) ${t.met ? 'met' : 'MISSED'}`);
}
