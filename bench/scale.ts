/**
 * Scale: time per delivery as the body grows, and as handlers for other event types pile up.
 */
import { z } from 'zod';
import { SECRET, jobCompletedBody } from './fixtures.js';
import { createReceiver } from './jobhook.js';
import { floorCase, hmacCase, jobhookCase } from './core.js';
import { compare, median, type Case, type CompareOptions, type Samples } from './measure.js';

export interface BodyScaleResult {
  sizes: { size: number; bytes: number; samples: Samples }[];
}

export async function runBodyScale(sizes: number[], options: CompareOptions): Promise<BodyScaleResult> {
  const result: BodyScaleResult = { sizes: [] };
  for (const size of sizes) {
    const body = jobCompletedBody(size);
    const cases = [floorCase('floor', body), await jobhookCase('jobhook', body), hmacCase('hmac', body)];
    result.sizes.push({ size, bytes: body.length, samples: await compare(cases, options) });
  }
  return result;
}

/** Marginal cost in ns per byte between the smallest and the largest body (medians over rounds). */
export function slope(result: BodyScaleResult, name: string): number {
  const first = result.sizes[0]!;
  const last = result.sizes[result.sizes.length - 1]!;
  return (median(last.samples[name]!) - median(first.samples[name]!)) / (last.bytes - first.bytes);
}

const otherSchema = z.looseObject({ id: z.string(), type: z.string() });
const noop = () => {};

/** A receiver with one `job.completed` handler and `count` handlers for other, schema'd event types. */
function receiverWithOthers(count: number) {
  const schemas: Record<string, typeof otherSchema> = {};
  for (let i = 0; i < count; i++) schemas[`other.type_${i}`] = otherSchema;
  const receiver = createReceiver({ secret: SECRET, schemas }).onJobCompleted(noop);
  for (let i = 0; i < count; i++) receiver.on(`other.type_${i}`, noop);
  return receiver;
}

/** For comparison: `count` no-op handlers for `job.completed` itself, which all run. */
function receiverWithSame(count: number) {
  const receiver = createReceiver({ secret: SECRET });
  for (let i = 0; i < count; i++) receiver.onJobCompleted(noop);
  return receiver;
}

/** Samples keyed `other <count>` (the target) and `same <count>`, interleaved in one comparison. */
export async function runHandlerScale(counts: number[], options: CompareOptions): Promise<Samples> {
  const body = jobCompletedBody(1024);
  const cases: Case[] = [];
  for (const count of counts) {
    cases.push(await jobhookCase(`other ${count}`, body, receiverWithOthers(count)));
    cases.push(await jobhookCase(`same ${count}`, body, receiverWithSame(count)));
  }
  return compare(cases, options);
}
