/** A JSON object: not null, not an array. What payloads, events and gateway answers are checked with. */
export function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
