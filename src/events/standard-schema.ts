// The Standard Schema v1 interface (https://standardschema.dev), inlined as its authors recommend
// so that jobhook's published types need no package: zod 3.24+ and 4, valibot 1, arktype and
// others implement it. Structurally identical to `StandardSchemaV1` of `@standard-schema/spec`.

/** A validator of any library that implements Standard Schema v1 (zod, valibot, arktype, …). */
export interface StandardSchemaV1<Input = unknown, Output = Input> {
  /** The Standard Schema properties. */
  readonly '~standard': StandardSchemaProps<Input, Output>;
}

/** The properties every Standard Schema has under `~standard`. */
export interface StandardSchemaProps<Input = unknown, Output = Input> {
  /** The version of the standard: 1. */
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
  /** What is wrong. */
  readonly message: string;
  /** The keys leading to the value at fault. */
  readonly path?: readonly (PropertyKey | { readonly key: PropertyKey })[] | undefined;
}

/** The type a schema's successful validation gives. */
export type InferOutput<S extends StandardSchemaV1> = NonNullable<S['~standard']['types']>['output'];
