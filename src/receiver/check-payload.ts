import { answers, type ReceiverResponse } from '../wire/answers.js';
import {
  passesQuickCheck,
  type EventSchemas,
  type StandardIssue,
  type StandardResult,
} from '../events/schemas.js';
import { isRecord } from '../common/values.js';

/**
 * A decoded payload checked against its type's schema: its type, the validated event and the
 * payload's own id; or, when it does not pass, its 400 answer and the message of that answer.
 */
export type CheckedPayload =
  | { ok: true; type: string; event: unknown; known: boolean; payloadId: string | undefined }
  | { ok: false; answer: ReceiverResponse; message: string };

/**
 * Validates a decoded payload with its type's schema (any Standard Schema): at once when the
 * default schemas' quick check passes it, else as a promise. A type with no schema is passed on as it came (`known: false`); anything
 * else that does not match is a 400.
 */
export function checkPayload(
  payload: unknown,
  schemas: EventSchemas,
): CheckedPayload | Promise<CheckedPayload> {
  if (!isRecord(payload) || typeof payload.type !== 'string') {
    return refused('The body must be a JSON object with a string "type".');
  }
  const { type } = payload;
  const payloadId = typeof payload.id === 'string' ? payload.id : undefined;
  const schema = Object.hasOwn(schemas, type) ? schemas[type] : undefined;
  if (!schema) return { ok: true, type, event: payload, known: false, payloadId };
  if (passesQuickCheck(schema, payload)) return { ok: true, type, event: payload, known: true, payloadId };
  const toChecked = (result: StandardResult<unknown>): CheckedPayload =>
    result.issues
      ? refused(describeIssues(type, result.issues))
      : { ok: true, type, event: result.value, known: true, payloadId };
  // Past the quick check (a custom schema, or a payload it refuses), validation may be asynchronous.
  return Promise.resolve(schema['~standard'].validate(payload)).then(toChecked);
}

function refused(message: string): CheckedPayload {
  return { ok: false, answer: answers.invalidPayload(message), message };
}

function describeIssues(type: string, issues: readonly StandardIssue[]): string {
  const listed = issues
    .slice(0, 5)
    .map((issue) => `${(issue.path ?? []).map(keyOf).join('.') || '(root)'}: ${issue.message}`)
    .join('; ');
  return `The ${type} payload does not match its schema: ${listed}.`;
}

function keyOf(segment: PropertyKey | { readonly key: PropertyKey }): string {
  return String(typeof segment === 'object' ? segment.key : segment);
}
