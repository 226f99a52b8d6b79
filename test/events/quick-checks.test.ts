// The hand-written checks that stand in for the default zod schemas on the hot path must accept
// exactly what the schemas accept: compared here on valid payloads, on payloads with one field
// removed, retyped or replaced anywhere in them, and on arbitrary JSON.
import fc from 'fast-check';
import { describe, expect, test } from 'vitest';
import {
  passesQuickCheck,
  jobCompletedSchema,
  jobFailedSchema,
  type StandardSchemaV1,
} from '../../src/events/schemas.js';
import { completedPayload, failedPayload, SECRET } from '../fixtures.js';
import { createReceiver } from 'jobhook';
import { signDelivery } from 'jobhook/testing';

const SCHEMAS: [string, StandardSchemaV1, () => Record<string, unknown>][] = [
  ['job.completed', jobCompletedSchema, () => completedPayload()],
  ['job.failed', jobFailedSchema, () => failedPayload()],
];

function zodAccepts(schema: StandardSchemaV1, payload: unknown): boolean {
  const result = schema['~standard'].validate(payload);
  if (result instanceof Promise) throw new Error('the default schemas are synchronous');
  return !result.issues;
}

/** Every path to a value in `value` (objects and arrays), the root excluded. */
function paths(value: unknown, prefix: (string | number)[] = []): (string | number)[][] {
  if (typeof value !== 'object' || value === null) return [];
  return Object.entries(value).flatMap(([key, inner]) => {
    const path = [...prefix, Array.isArray(value) ? Number(key) : key];
    return [path, ...paths(inner, path)];
  });
}

/** A deep copy of `payload` with the value at `path` replaced (or removed, for `REMOVE`). */
function changed(payload: unknown, path: (string | number)[], next: unknown): unknown {
  const copy = structuredClone(payload) as Record<string | number, unknown>;
  let parent = copy;
  for (const key of path.slice(0, -1)) parent = parent[key] as Record<string | number, unknown>;
  const last = path[path.length - 1]!;
  if (next === REMOVE) delete parent[last];
  else parent[last] = next;
  return copy;
}

const REMOVE = Symbol('remove');
const replacement = fc.oneof(
  fc.constant(REMOVE),
  fc.jsonValue(),
  fc.constantFrom('job.completed', 'job.failed', 'completed', 'failed', '', null, [], {}, 0),
);

describe.each(SCHEMAS)('the quick check of %s', (type, schema, valid) => {
  test('passes a valid payload, with or without fields of its own', () => {
    expect(passesQuickCheck(schema, valid())).toBe(true);
    expect(passesQuickCheck(schema, { ...valid(), extra: { nested: [1] } })).toBe(true);
    expect(zodAccepts(schema, valid())).toBe(true);
  });

  test('agrees with the zod schema when any one value is removed, retyped or replaced', () => {
    const base = valid();
    const where = paths(base);
    fc.assert(
      fc.property(fc.constantFrom(...where), replacement, (path, next) => {
        const payload = changed(base, path, next);
        if (typeof payload !== 'object' || payload === null || Array.isArray(payload)) return;
        expect(passesQuickCheck(schema, payload as Record<string, unknown>)).toBe(
          zodAccepts(schema, payload),
        );
      }),
      { numRuns: 2000 },
    );
  });

  test('agrees with the zod schema on arbitrary JSON objects', () => {
    fc.assert(
      fc.property(fc.dictionary(fc.string(), fc.jsonValue()), (object) => {
        const payload = { ...object, type };
        expect(passesQuickCheck(schema, payload)).toBe(zodAccepts(schema, payload));
      }),
      { numRuns: 1000 },
    );
  });

  test('never stands in for a schema of your own for the same type', async () => {
    const refuseAll: StandardSchemaV1 = {
      '~standard': {
        version: 1,
        vendor: 'test',
        validate: () => ({ issues: [{ message: 'refused here' }] }),
      },
    };
    const receiver = createReceiver({ secret: SECRET, schemas: { [type]: refuseAll } });
    const answer = await receiver.receive(signDelivery({ secret: SECRET, payload: valid() }));
    expect(answer.status).toBe(400);
    expect(answer.body).toContain('refused here');
  });
});
