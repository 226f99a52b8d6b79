/**
 * One case of the instruction count, alone in its process, for bench/instructions.ts to run under
 * valgrind with instrumentation off at start: receives `warmup` fresh 1 KB deliveries, makes
 * `made` more, turns callgrind's instrumentation on (callgrind_control), receives the first
 * `count` of them and exits. Two processes that differ only in `count` differ by those deliveries'
 * own instructions in the steady state: start-up, warm-up and the toggle are counted in neither or
 * in both.
 *
 *   valgrind --tool=callgrind --instr-atstart=no node instructions-process.js <case> <warmup> <count> <made>
 */
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { Webhook as StandardWebhook } from 'standardwebhooks';
import { KEY, SECRET, jobCompletedBody, standardDeliveries, stringDeliveries } from './fixtures.js';
import { verifyByHand } from './handwritten.js';
import type * as Jobhook from 'jobhook';
import { INSTRUCTION_CASES, type InstructionCase } from './instructions.js';

type Delivery = { headers: Record<string, string>; body: Buffer | string };
type Deliver = (delivery: Delivery) => unknown;

async function deliverer(name: InstructionCase): Promise<Deliver> {
  if (name === 'floor' || name === 'floorString') {
    return ({ headers, body }) => {
      const event = verifyByHand(
        KEY,
        headers['webhook-id'],
        headers['webhook-timestamp'],
        headers['webhook-signature'],
        body,
      );
      if (event === undefined) throw new Error('the floor rejected a valid delivery');
    };
  }
  if (name === 'standardwebhooksString') {
    const standard = new StandardWebhook(SECRET);
    return ({ headers, body }) => standard.verify(body, headers);
  }
  // The built package alone (bench/jobhook.ts loads every entry, whose start-up valgrind would slow).
  const build = name.endsWith('Before') ? './baseline/dist/index.js' : './dist/index.js';
  const { createReceiver } = (await import(new URL(build, import.meta.url).href)) as typeof Jobhook;
  const receiver = createReceiver({ secret: SECRET }).onJobCompleted(() => {});
  return async (delivery) => {
    const { status } = await receiver.receive(delivery);
    if (status !== 200) throw new Error(`receive() answered ${status}`);
  };
}

/**
 * Warm-up deliveries are made in batches, each dropped once received: all at once held 50 MB by
 * 24,000, and each full garbage collection of the counted window walked them.
 */
const BATCH = 1000;

function made(name: InstructionCase, count: number): Delivery[] {
  const body = jobCompletedBody(1024);
  return name.includes('String') ? stringDeliveries(body, count) : standardDeliveries(body, count);
}

async function receiveAll(deliver: Deliver, deliveries: Delivery[], count: number): Promise<void> {
  for (let i = 0; i < count; i++) {
    const result = deliver(deliveries[i]!);
    if (result instanceof Promise) await result;
  }
}

async function main(): Promise<void> {
  const [given = '', ...numbers] = process.argv.slice(2);
  const [warmup, count, total] = numbers.map(Number);
  const name = INSTRUCTION_CASES.find((known) => known === given);
  if (name === undefined || !(warmup! >= 0) || !(count! >= 0) || !(total! >= count!)) {
    throw new Error(
      `usage: instructions-process.js <${INSTRUCTION_CASES.join('|')}> <warmup> <count> <made>`,
    );
  }
  const deliver = await deliverer(name);
  for (let start = 0; start < warmup!; start += BATCH) {
    const size = Math.min(BATCH, warmup! - start);
    await receiveAll(deliver, made(name, size), size);
  }
  const counted = made(name, total!);
  // A full collection first, so that no marking the warm-up began is finished in the counted window.
  (globalThis as { gc?: () => void }).gc?.();
  // Outside valgrind (a try by hand) there is nothing to turn on.
  await promisify(execFile)('callgrind_control', ['-i', 'on', String(process.pid)]).catch(() => {});
  await receiveAll(deliver, counted, count!);
  process.exit(0);
}

await main();
