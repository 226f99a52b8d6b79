/**
 * One build's `receive()` alone in its process: CPU time per fresh 1 KB delivery, the median of 15
 * batches of 4,000 after 20,000 to warm up. compare-builds.ts runs two builds in one process,
 * where they share zod's and node:crypto's inline caches and one heap, and which one runs first
 * moved its figure by up to 25 %; here nothing is shared, so runs of A and B alternated, many
 * times over, compare them (bench/NOTES.md, "The redesign's cost"). From the repository's root,
 * with the builds' copies made as compare-builds.ts says:
 *
 *   for i in $(seq 10); do for b in jh-a jh-b; do
 *     echo "$b $(node node_modules/.cache/jobhook-bench/one-build.js node_modules/.cache/$b/dist string)"
 *   done; done
 */
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import type * as Jobhook from 'jobhook';
import { SECRET, jobCompletedBody, standardDeliveries, stringDeliveries } from './fixtures.js';
import { median } from './measure.js';

const [dist, bodyForm = 'bytes'] = process.argv.slice(2);
if (dist === undefined || (bodyForm !== 'bytes' && bodyForm !== 'string')) {
  throw new Error('usage: one-build.js <dist> [bytes|string]');
}
const { createReceiver } = (await import(pathToFileURL(resolve(dist, 'index.js')).href)) as typeof Jobhook;
const receiver = createReceiver({ secret: SECRET }).onJobCompleted(() => {});
const body = jobCompletedBody(1024);

const deliveries = (n: number) =>
  bodyForm === 'string' ? stringDeliveries(body, n) : standardDeliveries(body, n);

async function receiveAll(all: ReturnType<typeof deliveries>): Promise<void> {
  for (const delivery of all) {
    const { status } = await receiver.receive(delivery);
    if (status !== 200) throw new Error(`receive() answered ${status}`);
  }
}

await receiveAll(deliveries(20_000));
const perDelivery: number[] = [];
for (let batch = 0; batch < 15; batch++) {
  const all = deliveries(4000);
  const start = process.cpuUsage();
  await receiveAll(all);
  const { user, system } = process.cpuUsage(start);
  perDelivery.push((user + system) / all.length);
}
console.log(median(perDelivery).toFixed(2));
