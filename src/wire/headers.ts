/**
 * Request headers as adapters hand them over: a Fetch `Headers`, or a Node-style object whose
 * values may be arrays (repeated headers) and whose keys are usually, but not always, lowercase.
 */
export type HeadersInput =
  Headers | Readonly<Record<string, string | readonly string[] | number | undefined>>;

/** Case-insensitive, read-only access to one request's headers. */
export interface HeaderReader {
  get(name: string): string | undefined;
}

/** `name` must be lowercase. Repeated headers are joined with a space. */
export function readHeaders(input: HeadersInput): HeaderReader {
  if (isFetchHeaders(input)) {
    // Each name is looked up once: a Fetch `Headers#get` normalises the name and searches the list
    // on every call (bench/NOTES.md), and a delivery reads its signature
    // headers twice (before and after the body).
    const seen = new Map<string, string | undefined>();
    return {
      get(name) {
        let value = seen.get(name);
        if (value === undefined && !seen.has(name)) {
          value = input.get(name) ?? undefined;
          seen.set(name, value);
        }
        return value;
      },
    };
  }
  return {
    get(name) {
      // hasOwn, not `in`: a plain object's prototype has keys like "constructor".
      const value = Object.hasOwn(input, name) ? input[name] : findCaseInsensitive(input, name);
      if (Array.isArray(value)) return value.join(' ');
      if (typeof value === 'string') return value;
      return typeof value === 'number' ? String(value) : undefined;
    },
  };
}

function isFetchHeaders(input: HeadersInput): input is Headers {
  return typeof (input as Headers).get === 'function' && typeof (input as Headers).has === 'function';
}

/**
 * `name` among keys of any case. A header that is absent (Content-Encoding, on almost every
 * delivery) is looked for in every key: keys are compared by length first and walked with
 * `for…in`, which allocates no array and lowercases only keys of the right length.
 */
function findCaseInsensitive(input: Readonly<Record<string, unknown>>, name: string): unknown {
  for (const key in input) {
    if (key.length === name.length && Object.hasOwn(input, key) && key.toLowerCase() === name) {
      return input[key];
    }
  }
  return undefined;
}
