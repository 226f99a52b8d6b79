import { answers, type ReceiverResponse } from '../wire/answers.js';
import { decodeJson } from '../wire/body.js';
import type { EventSchemas } from '../events/schemas.js';

/** A verified body made into an event: its type, the validated event, and the payload's own id. */
export type ParsedEvent =
  | { ok: true; type: string; event: unknown; known: boolean; payloadId: string | undefined }
  | { ok: false; response: ReceiverResponse };

/**
 * Decodes the body as JSON and validates it with its type's schema. A type with no schema is
 * passed on as it came (`known: false`); anything else that does not match is a 400.
 */
export function parseEvent(body: Uint8Array, schemas: EventSchemas): ParsedEvent {
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
  const parsed = schema.safeParse(payload);
  if (!parsed.success) {
    return { ok: false, response: answers.invalidPayload(describeIssues(type, parsed.error.issues)) };
  }
  return { ok: true, type, event: parsed.data, known: true, payloadId };
}

function describeIssues(type: string, issues: readonly { path: PropertyKey[]; message: string }[]): string {
  const listed = issues
    .slice(0, 5)
    .map((issue) => `${issue.path.map(String).join('.') || '(root)'}: ${issue.message}`)
    .join('; ');
  return `The ${type} payload does not match its schema: ${listed}.`;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
