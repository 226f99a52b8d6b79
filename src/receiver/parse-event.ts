import { answers, type ReceiverResponse } from '../wire/answers.js';
import { decodeJson } from '../wire/body.js';
import type { EventSchemas } from '../events/schemas.js';
import type { StandardIssue, StandardResult } from '../events/standard-schema.js';
import { isThenable } from '../common/thenable.js';

/** A verified body made into an event: its type, the validated event, and the payload's own id. */
export type ParsedEvent =
  | { ok: true; type: string; event: unknown; known: boolean; payloadId: string | undefined }
  | { ok: false; response: ReceiverResponse };

/**
 * Decodes the body as JSON and validates it with its type's schema (any Standard Schema; a promise
 * only when the schema is asynchronous). A type with no schema is passed on as it came
 * (`known: false`); anything else that does not match is a 400.
 */
export function parseEvent(body: Uint8Array, schemas: EventSchemas): ParsedEvent | Promise<ParsedEvent> {
  const decoded = decodeJson(body);
  if (!decoded.ok) return { ok: false, response: answers.invalidJson(decoded.message) };
  const payload = decoded.value;
  if (!isRecord(payload) || typeof payload.type !== 'string') {
    const message = 'The body must be a JSON object with a string "type".';
    return { ok: false, response: answers.invalidPayload(message) };
  }
  const { type } = payload;
  const payloadId = typeof payload.id === 'string' ? payload.id : undefined;
  const schema = Object.hasOwn(schemas, type) ? schemas[type] : undefined;
  if (!schema) return { ok: true, type, event: payload, known: false, payloadId };
  const validated = schema['~standard'].validate(payload);
  const settle = (result: StandardResult<unknown>): ParsedEvent =>
    result.issues
      ? { ok: false, response: answers.invalidPayload(describeIssues(type, result.issues)) }
      : { ok: true, type, event: result.value, known: true, payloadId };
  return isThenable(validated) ? validated.then(settle) : settle(validated);
}

function describeIssues(type: string, issues: readonly StandardIssue[]): string {
  const listed = issues
    .slice(0, 5)
    .map((issue) => `${(issue.path ?? []).map(keyOf).join('.') || '(root)'}: ${issue.message}`)
    .join('; ');
  return `The ${type} payload does not match its schema: ${listed}.`;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function keyOf(segment: PropertyKey | { readonly key: PropertyKey }): string {
  return String(typeof segment === 'object' ? segment.key : segment);
}
