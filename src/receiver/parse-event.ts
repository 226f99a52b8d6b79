import { answers, type ReceiverResponse } from '../wire/answers.js';
import { decodeJson } from '../wire/body.js';
import type { EventSchemas } from '../events/schemas.js';
import { passesQuickCheck } from '../events/quick-checks.js';
import type { StandardIssue, StandardResult } from '../events/standard-schema.js';
import { isThenable } from '../common/thenable.js';
import { isRecord } from '../common/is-record.js';

/**
 * A verified body made into an event: its type, the validated event, the payload's own id, and
 * the payload as decoded (what a hand-off queues). A failure carries its 400 answer and, for the
 * log or a queued job's error, the message of that answer.
 */
export type ParsedEvent =
  | {
      ok: true;
      type: string;
      event: unknown;
      known: boolean;
      payloadId: string | undefined;
      payload: unknown;
    }
  | { ok: false; response: ReceiverResponse; message: string };

/**
 * Decodes the body as JSON and validates it with its type's schema (any Standard Schema; a promise
 * only when the schema is asynchronous). A type with no schema is passed on as it came
 * (`known: false`); anything else that does not match is a 400.
 */
export function parseEvent(
  body: Uint8Array | string,
  schemas: EventSchemas,
): ParsedEvent | Promise<ParsedEvent> {
  const decoded = decodeJson(body);
  if (!decoded.ok)
    return { ok: false, response: answers.invalidJson(decoded.message), message: decoded.message };
  return checkPayload(decoded.value, schemas);
}

/**
 * Validates a decoded payload with its type's schema: the second half of {@link parseEvent}, and
 * what `receiver.handleQueued` runs on a payload a hand-off queued.
 */
export function checkPayload(payload: unknown, schemas: EventSchemas): ParsedEvent | Promise<ParsedEvent> {
  if (!isRecord(payload) || typeof payload.type !== 'string') {
    const message = 'The body must be a JSON object with a string "type".';
    return { ok: false, response: answers.invalidPayload(message), message };
  }
  const { type } = payload;
  const payloadId = typeof payload.id === 'string' ? payload.id : undefined;
  const schema = Object.hasOwn(schemas, type) ? schemas[type] : undefined;
  if (!schema) return { ok: true, type, event: payload, known: false, payloadId, payload };
  if (passesQuickCheck(schema, payload))
    return { ok: true, type, event: payload, known: true, payloadId, payload };
  const validated = schema['~standard'].validate(payload);
  const toParsed = (result: StandardResult<unknown>): ParsedEvent => {
    if (!result.issues) return { ok: true, type, event: result.value, known: true, payloadId, payload };
    const message = describeIssues(type, result.issues);
    return { ok: false, response: answers.invalidPayload(message), message };
  };
  return isThenable(validated) ? validated.then(toParsed) : toParsed(validated);
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
