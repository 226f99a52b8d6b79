/**
 * Where a contract finds a value: a dot path into the decoded payload (`data.task_id`), or
 * `header:<name>` for a value a header carries. Read with own-property lookups only, so a path can
 * never reach a prototype.
 */
import { isRecord } from '../common/is-record.js';
import type { HeaderReader } from '../wire/headers.js';

/** The prefix of a path that names a header rather than a field. */
export const HEADER_PATH = 'header:';

/** A segment of a dot path: no dot, no space, none of the names that reach a prototype. */
const SEGMENT = /^[^.\s]{1,64}$/;
const FORBIDDEN = new Set(['__proto__', 'prototype', 'constructor']);
/** An HTTP header name (RFC 9110 token). */
const HEADER_NAME = /^[!#$%&'*+.^_`|~0-9A-Za-z-]{1,128}$/;
const MAX_SEGMENTS = 16;

/** Whether `path` is a dot path such as `data.task_id` (never one that starts `header:`). */
export function isDotPath(path: unknown): path is string {
  if (typeof path !== 'string' || path === '' || path.startsWith(HEADER_PATH)) return false;
  const segments = path.split('.');
  return (
    segments.length <= MAX_SEGMENTS &&
    segments.every((segment) => SEGMENT.test(segment) && !FORBIDDEN.has(segment))
  );
}

/** Whether `name` is an HTTP header name. */
export function isHeaderName(name: unknown): name is string {
  return typeof name === 'string' && HEADER_NAME.test(name);
}

/** Whether `path` is `header:<name>` with a valid header name. */
export function isHeaderPath(path: unknown): path is string {
  return (
    typeof path === 'string' && path.startsWith(HEADER_PATH) && isHeaderName(path.slice(HEADER_PATH.length))
  );
}

/** A path as a reader: the value it names in a payload and its headers, `undefined` when absent. */
export type PathReader = (payload: Record<string, unknown>, headers: HeaderReader) => unknown;

/** The reader of a path already checked with {@link isDotPath} or {@link isHeaderPath}. */
export function pathReader(path: string): PathReader {
  if (path.startsWith(HEADER_PATH)) {
    const name = path.slice(HEADER_PATH.length).toLowerCase();
    return (_payload, headers) => headers.get(name);
  }
  const segments = path.split('.');
  return (payload) => {
    let value: unknown = payload;
    for (const segment of segments) {
      if (Array.isArray(value) && /^\d+$/.test(segment)) value = value[Number(segment)];
      else if (isRecord(value) && Object.hasOwn(value, segment)) value = value[segment];
      else return undefined;
    }
    return value;
  };
}
