// The namespace import, not `{ z }`: bundlers then keep only the parts of zod used (about 85 KB
// minified for a Workers app instead of 450 KB, which the `z` object's locales and JSON Schema code add).
import * as z from 'zod';
import type { InferOutput, StandardSchemaV1 } from './standard-schema.js';

// The event types are written out, not inferred from zod: the published types then load none of
// zod's declarations (most of an app's type-check time otherwise), and have no index signature,
// so a misspelt field is a compile error. Run time keeps unknown fields all the same (loose
// objects). test/events/events.test-d.ts checks that these and the schemas below agree.

/** A verified `job.completed` delivery, as handlers receive it (unknown fields kept at run time). */
export interface JobCompletedEvent {
  id: string;
  type: 'job.completed';
  /** ISO 8601. */
  created_at: string;
  data: {
    task_id: string;
    status: 'completed';
    image_url: string;
  };
}

/** A verified `job.failed` delivery, as handlers receive it (unknown fields kept at run time). */
export interface JobFailedEvent {
  id: string;
  type: 'job.failed';
  /** ISO 8601. */
  created_at: string;
  data: {
    task_id: string;
    status: 'failed';
    error: { code: string; message: string };
  };
}

/** The zod schemas themselves, for jobhook's own type tests; the public names below hide zod. */
export const zodSchemas = {
  // Loose objects: fields the gateway adds later reach handlers instead of being stripped.
  'job.completed': z.looseObject({
    id: z.string(),
    type: z.literal('job.completed'),
    created_at: z.string(),
    data: z.looseObject({
      task_id: z.string(),
      status: z.literal('completed'),
      image_url: z.string(),
    }),
  }),
  'job.failed': z.looseObject({
    id: z.string(),
    type: z.literal('job.failed'),
    created_at: z.string(),
    data: z.looseObject({
      task_id: z.string(),
      status: z.literal('failed'),
      error: z.looseObject({ code: z.string(), message: z.string() }),
    }),
  }),
};

/** Default schema of a `job.completed` delivery (a Standard Schema). */
export const jobCompletedSchema: StandardSchemaV1<unknown, JobCompletedEvent> = zodSchemas['job.completed'];
/** Default schema of a `job.failed` delivery (a Standard Schema). */
export const jobFailedSchema: StandardSchemaV1<unknown, JobFailedEvent> = zodSchemas['job.failed'];

/** The schemas of the default event types. */
export interface DefaultSchemas {
  'job.completed': StandardSchemaV1<unknown, JobCompletedEvent>;
  'job.failed': StandardSchemaV1<unknown, JobFailedEvent>;
}

/** The schemas jobhook validates with unless the `schemas` option replaces one. */
export const defaultSchemas: DefaultSchemas = {
  'job.completed': jobCompletedSchema,
  'job.failed': jobFailedSchema,
};

/** Event type to the schema its payload must match: any Standard Schema (zod 3 or 4, valibot, …). */
export type EventSchemas = Record<string, StandardSchemaV1>;

/** Event type to the payload type handlers receive. */
export type EventMapOf<S extends EventSchemas> = { [K in keyof S & string]: InferOutput<S[K]> };

/** The default schemas, with those the user passed taking their place or adding new types. */
export type MergedSchemas<S extends EventSchemas> = Omit<DefaultSchemas, keyof S> & S;

/** The event map of a receiver created without custom schemas. */
export interface DefaultEvents {
  'job.completed': JobCompletedEvent;
  'job.failed': JobFailedEvent;
}

/**
 * The `type` of an event with no schema: at run time any string other than the receiver's event
 * types. TypeScript cannot say "a string but not these", so it is typed as a string pattern no
 * event type has (event types have no spaces): comparing with `'job.completed'` then narrows
 * `onAny`'s event to the typed event, and the type still goes wherever a `string` does. The
 * pattern's text is what a type error shows, so it says the fix: compare it with a type that has
 * no schema as a plain string, `(event.type as string) === 'job.started'`.
 */
export type UnknownEventType = `${string} (a type with no schema: compare it as a string)`;

/** A verified delivery whose type has no schema; it reaches `onAny` handlers only, as it came. */
export interface UnknownEvent {
  type: UnknownEventType;
  [field: string]: unknown;
}
