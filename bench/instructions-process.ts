/**
 * One case of the instruction count, alone in its process, for bench/instructions.ts to run under
 * valgrind: makes `made` fresh 1 KB deliveries, then verifies (or receives) the first `count`.
 * Everything but the deliveries is the same whatever `count` is, so the difference between two
 * counts is the deliveries' own instructions.
 *
 *   node instructions-process.js <case> <count> <made>
 */
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
  const { createReceiver } = (await import(
    new URL('./dist/index.js', import.meta.url).href
  )) as typeof Jobhook;
  const receiver = createReceiver({ secret: SECRET }).onJobCompleted(() => {});
  return async (delivery) => {
    const { status } = await receiver.receive(delivery);
    if (status !== 200) throw new Error(`receive() answered ${status}`);
  };
}

async function main(): Promise<void> {
  const [given = '', countText, madeText] = process.argv.slice(2);
  const count = Number(countText);
  const made = Number(madeText);
  const name = INSTRUCTION_CASES.find((known) => known === given);
  if (name === undefined || !(count >= 0) || !(made >= count)) {
    throw new Error(`usage: instructions-process.js <${INSTRUCTION_CASES.join('|')}> <count> <made>`);
  }
  const body = jobCompletedBody(1024);
  const deliveries: Delivery[] = name.endsWith('String')
    ? stringDeliveries(body, made)
    : standardDeliveries(body, made);
  const deliver = await deliverer(name);
  for (let i = 0; i < count; i++) {
    const result = deliver(deliveries[i]!);
    if (result instanceof Promise) await result;
  }
}

await main();
