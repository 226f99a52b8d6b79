// The public event types are written by hand (so the published types load no zod); these checks
// keep them equal to what the default zod schemas produce, apart from the index signatures that
// loose objects add (unknown fields are kept at run time, but are not typed).
import { expectTypeOf, test } from 'vitest';
import type { z } from 'zod';
import type { JobCompletedEvent, JobFailedEvent } from 'jobhook';
import type { zodSchemas } from '../../src/events/schemas.js';

/** A type without its string index signatures, at every depth. */
type Known<T> = T extends object ? { [K in keyof T as string extends K ? never : K]: Known<T[K]> } : T;

test('JobCompletedEvent is the job.completed schema’s output, without index signatures', () => {
  expectTypeOf<Known<z.output<(typeof zodSchemas)['job.completed']>>>().toEqualTypeOf<
    Known<JobCompletedEvent>
  >();
});

test('JobFailedEvent is the job.failed schema’s output, without index signatures', () => {
  expectTypeOf<Known<z.output<(typeof zodSchemas)['job.failed']>>>().toEqualTypeOf<Known<JobFailedEvent>>();
});

test('the check above notices a difference', () => {
  type Drifted = Omit<JobFailedEvent, 'created_at'> & { created_at: number };
  expectTypeOf<Known<z.output<(typeof zodSchemas)['job.failed']>>>().not.toEqualTypeOf<Known<Drifted>>();
});
