// The namespace import, not `{ z }`: bundlers then keep only the parts of zod used (about 85 KB
// minified for a Workers app instead of 450 KB, which the `z` object's locales and JSON Schema code add).
import * as z from 'zod';

// Loose objects: fields the gateway adds later reach handlers instead of being stripped.

/** Default schema of a `job.completed` delivery. */
export const jobCompletedSchema = z.looseObject({
  id: z.string(),
  type: z.literal('job.completed'),
  created_at: z.string(),
  data: z.looseObject({
    task_id: z.string(),
    status: z.literal('completed'),
    image_url: z.string(),
  }),
});

/** Default schema of a `job.failed` delivery. */
export const jobFailedSchema = z.looseObject({
  id: z.string(),
  type: z.literal('job.failed'),
  created_at: z.string(),
  data: z.looseObject({
    task_id: z.string(),
    status: z.literal('failed'),
    error: z.looseObject({ code: z.string(), message: z.string() }),
  }),
});

/** The schemas jobhook validates with unless the `schemas` option replaces one. */
export const defaultSchemas = {
  'job.completed': jobCompletedSchema,
  'job.failed': jobFailedSchema,
};

export type DefaultSchemas = typeof defaultSchemas;
/** Event type to the zod schema its payload must match. */
export type EventSchemas = Record<string, z.ZodType>;

/** A verified `job.completed` delivery, as handlers receive it; unknown fields are kept. */
export type JobCompletedEvent = z.output<typeof jobCompletedSchema>;
/** A verified `job.failed` delivery, as handlers receive it; unknown fields are kept. */
export type JobFailedEvent = z.output<typeof jobFailedSchema>;

/** Event type to the payload type handlers receive. */
export type EventMapOf<S extends EventSchemas> = { [K in keyof S & string]: z.output<S[K]> };

/** The default schemas, with those the user passed taking their place or adding new types. */
export type MergedSchemas<S extends EventSchemas> = Omit<DefaultSchemas, keyof S> & S;

/** The event map of a receiver created without custom schemas. */
export type DefaultEvents = EventMapOf<DefaultSchemas>;

/** A verified delivery whose type has no schema; it reaches `onAny` handlers only, as it came. */
export interface UnknownEvent {
  type: string;
  [field: string]: unknown;
}
