/** A JSON object: not null, not an array. What payloads, events and gateway answers are checked with. */
export function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** What sort of thing was given, in words, without its value (a value can be a secret). */
export function kindOf(value: unknown): string {
  if (value === undefined) return 'nothing';
  if (value === null) return 'null';
  if (Array.isArray(value)) return value.length === 0 ? 'an empty array' : 'an array';
  switch (typeof value) {
    case 'number':
      if (Number.isNaN(value)) return 'NaN';
      if (!Number.isFinite(value)) return 'an infinite number';
      if (value < 0) return 'a negative number';
      if (value === 0) return 'zero';
      if (!Number.isInteger(value)) return 'a fraction';
      return Number.isSafeInteger(value) ? 'a number' : 'a number too large to be exact';
    case 'string':
      return value.length === 0 ? 'an empty string' : 'a string';
    case 'object':
      return 'an object';
    case 'function':
      return 'a function';
    default:
      return `a ${typeof value}`;
  }
}
