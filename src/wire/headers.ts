import { answers, type ReceiverResponse } from './answers.js';

/** Request headers as adapters hand them over: a Fetch `Headers`, or a Node-style object (keys of any case). */
export type HeadersInput =
  Headers | Readonly<Record<string, string | readonly string[] | number | undefined>>;

/** Case-insensitive, read-only access to one request's headers. */
export interface HeaderReader {
  get(name: string): string | undefined;
}

/** An HTTP header name (RFC 9110 token), of at most 128 characters. */
const HEADER_NAME = /^[!#$%&'*+.^_`|~0-9A-Za-z-]{1,128}$/;

/** Whether `name` is an HTTP header name: the one check of every header name an option gives. */
export function isHeaderName(name: unknown): name is string {
  return typeof name === 'string' && HEADER_NAME.test(name);
}

/** `name` must be lowercase. Repeated headers are joined with a space. */
export function readHeaders(input: HeadersInput): HeaderReader {
  if (isFetchHeaders(input)) {
    // Each name looked up once: `Headers#get` searches on every call, and signature headers are read twice.
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

function findCaseInsensitive(input: Readonly<Record<string, unknown>>, name: string): unknown {
  for (const key in input) {
    if (key.length === name.length && Object.hasOwn(input, key) && key.toLowerCase() === name) {
      return input[key];
    }
  }
  return undefined;
}

const MAX_SHOWN = 40;

/** 415 for a body sent with a content coding, before it is read (signatures cover the bytes as sent). */
export function encodingRefusal(headers: HeaderReader): ReceiverResponse | undefined {
  const value = headers.get('content-encoding');
  if (value === undefined || isIdentity(value)) return undefined;
  return answers.unsupportedEncoding(shown(value));
}

function isIdentity(value: string): boolean {
  for (const coding of value.split(',')) {
    const name = coding.trim();
    if (name !== '' && name.toLowerCase() !== 'identity') return false;
  }
  return true;
}

/** A stranger's value as an answer may repeat it: other characters than a coding list's become `?`, cut short. */
function shown(value: string): string {
  const kept = value
    .trim()
    .slice(0, MAX_SHOWN)
    .replace(/[^A-Za-z0-9._+\-, ]/g, '?');
  return value.trim().length > MAX_SHOWN ? `${kept}...` : kept;
}
