// The namespace import, not `{ z }`: bundlers then keep only the parts of zod used.
import * as z from 'zod';
import { isRecord } from '../common/values.js';

// Written out, not inferred from zod, so the published types load none of it (test/types checks they agree).

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

/** The `type` of an event with no schema: a pattern no event type has, whose text says the fix. */
export type UnknownEventType = `${string} (a type with no schema: compare it as a string)`;

/** A verified delivery whose type has no schema; it reaches `onAny` handlers only, as it came. */
export interface UnknownEvent {
  type: UnknownEventType;
  [field: string]: unknown;
}

// The Standard Schema v1 interface (https://standardschema.dev), inlined as its authors recommend.

/** A validator of any library that implements Standard Schema v1 (zod, valibot, arktype, …). */
export interface StandardSchemaV1<Input = unknown, Output = Input> {
  readonly '~standard': StandardSchemaProps<Input, Output>;
}

/** The properties every Standard Schema has under `~standard`. */
export interface StandardSchemaProps<Input = unknown, Output = Input> {
  readonly version: 1;
  /** The library that made the schema. */
  readonly vendor: string;
  /** Validates a value; the result may be a promise for asynchronous schemas. */
  readonly validate: (
    value: unknown,
    options?: { readonly libraryOptions?: Record<string, unknown> | undefined },
  ) => StandardResult<Output> | Promise<StandardResult<Output>>;
  /** The input and output types, for inference only. */
  readonly types?: { readonly input: Input; readonly output: Output } | undefined;
}

/** What `validate` gives: the output value, or the issues. */
export type StandardResult<Output> =
  { readonly value: Output; readonly issues?: undefined } | { readonly issues: readonly StandardIssue[] };

/** One validation issue: a message and where in the value it is. */
export interface StandardIssue {
  readonly message: string;
  /** The keys leading to the value at fault. */
  readonly path?: readonly (PropertyKey | { readonly key: PropertyKey })[] | undefined;
}

/** The type a schema's successful validation gives. */
export type InferOutput<S extends StandardSchemaV1> = NonNullable<S['~standard']['types']>['output'];

/** The default schemas' checks by hand, accepting exactly what zod does (a property test compares them). */
const QUICK_CHECKS = new Map<StandardSchemaV1, (payload: Record<string, unknown>) => boolean>([
  [
    jobCompletedSchema,
    (payload) => {
      if (!isEnvelope(payload, 'job.completed')) return false;
      const { data } = payload;
      return (
        isRecord(data) &&
        typeof data.task_id === 'string' &&
        data.status === 'completed' &&
        typeof data.image_url === 'string'
      );
    },
  ],
  [
    jobFailedSchema,
    (payload) => {
      if (!isEnvelope(payload, 'job.failed')) return false;
      const { data } = payload;
      if (!isRecord(data) || typeof data.task_id !== 'string' || data.status !== 'failed') return false;
      const { error } = data;
      return isRecord(error) && typeof error.code === 'string' && typeof error.message === 'string';
    },
  ],
]);

/** Whether `payload` passes `schema` for certain; `false` means "ask the schema". */
export function passesQuickCheck(schema: StandardSchemaV1, payload: Record<string, unknown>): boolean {
  const check = QUICK_CHECKS.get(schema);
  return check !== undefined && check(payload);
}

function isEnvelope(payload: Record<string, unknown>, type: string): boolean {
  return typeof payload.id === 'string' && payload.type === type && typeof payload.created_at === 'string';
}
