/**
 * The CPU one forged delivery costs: a fresh timestamp, a 1 MiB body and a `webhook-signature`
 * header full of made-up v1 signatures, which no secret is needed to write. Whichever form of
 * `#runtime` Node's conditions pick is measured (tsx would map `#runtime` to the Node form through
 * tsconfig's paths, so the script is compiled first), from the repository's root:
 *
 *   npm run build && npx esbuild bench/signature-flood.ts --outfile=node_modules/.cache/flood.mjs \
 *     --platform=node --format=esm --log-level=warning
 *   node --conditions=worker node_modules/.cache/flood.mjs   (the Web form: crypto.subtle)
 *   node node_modules/.cache/flood.mjs                       (the Node form: node:crypto)
 *
 * Prints the CPU time (user + system, every thread: Node runs crypto.subtle on its thread pool) and
 * the wall time of one request, the medians of a few, and the answer.
 */
import { randomBytes } from 'node:crypto';
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import type * as Jobhook from 'jobhook';

const { createReceiver } = (await import(pathToFileURL(resolve('dist/index.js')).href)) as typeof Jobhook;

const secret = `whsec_${randomBytes(32).toString('base64')}`;
const receiver = createReceiver({ secret, logger: { error: () => undefined } });
const body = new Uint8Array(1024 * 1024).fill(0x20);

/** One forged delivery with `count` signatures, answered by `receiver.fetch`; its CPU in ms. */
async function forged(count: number) {
  const signatures = Array.from({ length: count }, () => `v1,${randomBytes(32).toString('base64')}`);
  const request = new Request('http://127.0.0.1/webhooks', {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      'webhook-id': 'msg_forged',
      'webhook-timestamp': String(Math.floor(Date.now() / 1000)),
      'webhook-signature': signatures.join(' '),
    },
    body,
  });
  const before = process.cpuUsage();
  const startedAt = performance.now();
  const response = await receiver.fetch(request);
  const answer = (await response.json()) as { error?: { message: string } };
  const wallMs = performance.now() - startedAt;
  const used = process.cpuUsage(before);
  const cpuMs = (used.user + used.system) / 1000;
  return { cpuMs, wallMs, status: response.status, message: answer.error?.message ?? '' };
}

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;

for (const count of [1, 32, 330, 2700]) {
  const runs = [];
  for (let run = 0; run < (count > 300 ? 3 : 9); run++) runs.push(await forged(count));
  const { status, message } = runs[0]!;
  const cpu = median(runs.map((run) => run.cpuMs)).toFixed(1);
  const wall = median(runs.map((run) => run.wallMs)).toFixed(1);
  console.log(
    `${String(count).padStart(5)} signatures: ${cpu} ms CPU, ${wall} ms wall ` +
      `(medians of ${runs.length}); ${status} ${message}`,
  );
}
