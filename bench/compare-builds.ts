/**
 * Two builds of jobhook side by side, for a change to the hot path: `receive()` of each build on
 * fresh 1 KB deliveries (as created, and with `results: false`, `dedupe: false` or both), against
 * the hand-written floor, every case in the same interleaved rounds. Prints each case's median CPU
 * time per delivery, its ratio to the floor, and B over A. From the repository's root, with a
 * copy of `dist/` (and package.json, for `#runtime`) taken before the change, under node_modules/
 * so that the copies find their dependencies:
 *
 *   git checkout <before> && npm run build && mkdir -p node_modules/.cache/jh-a \
 *     && cp -r dist package.json node_modules/.cache/jh-a/ && git checkout -
 *   npm run build && mkdir -p node_modules/.cache/jh-b && cp -r dist package.json node_modules/.cache/jh-b/
 *   npx esbuild bench/*.ts --outdir=node_modules/.cache/jobhook-bench --platform=node --format=esm \
 *     --target=node20 --log-level=warning
 *   node node_modules/.cache/jobhook-bench/compare-builds.js node_modules/.cache/jh-a/dist \
 *     node_modules/.cache/jh-b/dist [rounds] [variant] [bytes|string]
 *
 * Run it both ways round (A B, then B A): which build comes first moves its ratio by a few %, one
 * way or the other, so the change is the geometric mean of the two B/A figures, the second
 * inverted. One variant at a time (`default`, `results: false`, `dedupe: false` or
 * `results: false, dedupe: false`) keeps the other receivers' kept events out of the heap.
 */
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import type * as Jobhook from 'jobhook';
import { KEY, SECRET, jobCompletedBody, standardDeliveries, stringDeliveries } from './fixtures.js';
import { verifyByHand } from './handwritten.js';
import { compare, formatNs, median, ratio, type Case } from './measure.js';

/**
 * Like measure.ts's `bench`, but a batch's time is this process's CPU time (user + system) rather
 * than the wall clock: on a machine shared with other work, the wall time of a batch counts the
 * time the process waited for a core, which moves by more than a change to the hot path does.
 */
function bench<P>(name: string, prepare: (n: number) => P, op: (prepared: P, i: number) => unknown): Case {
  return {
    name,
    async batch(n) {
      const prepared = prepare(n);
      const start = process.cpuUsage();
      for (let i = 0; i < n; i++) {
        const result = op(prepared, i);
        if (result instanceof Promise) await result;
      }
      const { user, system } = process.cpuUsage(start);
      return (user + system) / 1000;
    },
  };
}

const [distA, distB, roundsArg, only, bodyForm = 'bytes'] = process.argv.slice(2);
if (distA === undefined || distB === undefined || (bodyForm !== 'bytes' && bodyForm !== 'string')) {
  throw new Error('usage: compare-builds.js <dist A> <dist B> [rounds] [variant] [bytes|string]');
}
const load = async (dist: string) =>
  (await import(pathToFileURL(resolve(dist, 'index.js')).href)) as typeof Jobhook;
const builds = { A: await load(distA), B: await load(distB) };
const body = jobCompletedBody(1024);
const noop = () => {};

// `string`: the body as serverless platforms hand it (the floor then hashes and parses the string).
const deliveries = (n: number) =>
  bodyForm === 'string' ? stringDeliveries(body, n) : standardDeliveries(body, n);

const FLOOR = 'hand-written floor';
const cases: Case[] = [
  bench(FLOOR, deliveries, (d, i) => {
    const { headers, body: bytes } = d[i]!;
    const event = verifyByHand(
      KEY,
      headers['webhook-id'],
      headers['webhook-timestamp'],
      headers['webhook-signature'],
      bytes,
    );
    if (event === undefined) throw new Error('the floor rejected a valid delivery');
  }),
];
const variants = {
  default: { secret: SECRET },
  'results: false': { secret: SECRET, results: false },
  'dedupe: false': { secret: SECRET, dedupe: false },
  'results: false, dedupe: false': { secret: SECRET, results: false, dedupe: false },
} as const;
// One variant alone (`default`, `results: false`…) measures it without the other receivers' kept
// events in the heap, whose garbage collection the other cases would share.
const measured = Object.entries(variants).filter(([variant]) => only === undefined || variant === only);
for (const [label, { createReceiver }] of Object.entries(builds)) {
  for (const [variant, options] of measured) {
    const receiver = createReceiver(options).onJobCompleted(noop);
    const [first] = deliveries(1);
    const answer = await receiver.receive(first!);
    if (answer.status !== 200)
      throw new Error(`${label} ${variant}: answered ${answer.status} ${answer.body}`);
    cases.push(bench(`${label}: ${variant}`, deliveries, (d, i) => receiver.receive(d[i]!)));
  }
}

const samples = await compare(cases, { rounds: Number(roundsArg ?? 41), batchMs: 10, warmupMs: 200 });
console.log(`| case | time per delivery | vs the floor |\n| --- | --- | --- |`);
for (const c of cases) {
  console.log(
    `| ${c.name} | ${formatNs(median(samples[c.name]!))} | ${ratio(samples, c.name, FLOOR).toFixed(2)}× |`,
  );
}
for (const [variant] of measured) {
  console.log(`B / A, ${variant}: ${ratio(samples, `B: ${variant}`, `A: ${variant}`).toFixed(3)}×`);
}
