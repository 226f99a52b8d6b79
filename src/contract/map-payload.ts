import { isRecord } from '../common/errors.js';
import { isHeaderName, type HeaderReader } from '../wire/headers.js';

/**
 * A contract's payload mapping: a sender's payload, verified and decoded, rewritten as jobhook's
 * events (`{ id, type, created_at, data: { task_id, status, image_url | error } }`) before the
 * schemas see it, so that handlers, dedupe, hand-offs and results work as with the default shape.
 */

/** What the receiver's pipeline calls on each verified, decoded payload. */
export type PayloadMapper = (payload: unknown, headers: HeaderReader) => unknown;

/** The payload part of a contract, checked, with its defaults filled in. */
export interface PayloadPaths {
  typePath: string;
  typeValues: { completed: string; failed: string };
  taskIdPath: string;
  imageUrlPath: string;
  errorPath: string;
  eventIdPath: string | null;
  createdAtPath: string | null;
}

/** Unix seconds below this are read as seconds, above it as milliseconds (the year 5138 in seconds). */
const MILLISECONDS_FROM = 1e11;

/**
 * The mapping of `paths`. The sender's fields are kept where they were (at the top, and in `data`
 * when it is an object); jobhook's fields are written over them. A payload that is no JSON object
 * or has no type is passed on unchanged, for the schemas to refuse (400). Without an event id in
 * the payload the id is `<type>:<task id>`, the same on every retry: one task has one outcome.
 */
export function payloadMapper(paths: PayloadPaths): PayloadMapper {
  const readType = pathReader(paths.typePath);
  const readTaskId = pathReader(paths.taskIdPath);
  const readImageUrl = pathReader(paths.imageUrlPath);
  const readError = pathReader(paths.errorPath);
  const readEventId = paths.eventIdPath === null ? undefined : pathReader(paths.eventIdPath);
  const readCreatedAt = paths.createdAtPath === null ? undefined : pathReader(paths.createdAtPath);
  const { completed, failed } = paths.typeValues;
  return (payload, headers) => {
    if (!isRecord(payload)) return payload;
    const given = readType(payload, headers);
    if (typeof given !== 'string') return payload;
    const type = given === completed ? 'job.completed' : given === failed ? 'job.failed' : given;
    const eventId = readEventId?.(payload, headers);
    const taskId = readTaskId(payload, headers);
    const mapped: Record<string, unknown> = { ...payload, type };
    const job = type === 'job.completed' || type === 'job.failed';
    if (typeof eventId === 'string' && eventId !== '') mapped.id = eventId;
    else if (job && typeof taskId === 'string') mapped.id = `${type}:${taskId}`;
    if (!job) return mapped;
    mapped.created_at = isoTime(readCreatedAt?.(payload, headers)) ?? new Date().toISOString();
    const data: Record<string, unknown> = isRecord(payload.data) ? { ...payload.data } : {};
    // Left out when absent, so that the schema names the missing field in its 400.
    if (taskId !== undefined) data.task_id = taskId;
    if (type === 'job.completed') {
      data.status = 'completed';
      const imageUrl = readImageUrl(payload, headers);
      if (imageUrl !== undefined) data.image_url = imageUrl;
    } else {
      data.status = 'failed';
      data.error = errorOf(readError(payload, headers));
    }
    mapped.data = data;
    return mapped;
  };
}

/** ISO 8601 as given, or Unix seconds or milliseconds as ISO 8601; `undefined` for anything else. */
function isoTime(value: unknown): string | undefined {
  if (typeof value === 'string' && value !== '' && !Number.isNaN(Date.parse(value))) return value;
  if (typeof value !== 'number' || !Number.isFinite(value) || value < 0) return undefined;
  const date = new Date(value < MILLISECONDS_FROM ? value * 1000 : value);
  return Number.isNaN(date.getTime()) ? undefined : date.toISOString();
}

/**
 * A failed job's error as `{ code, message }` (its other fields kept): a string is the message,
 * and what is missing is `unknown`. A failure is delivered even when its sender explains nothing:
 * refusing it would only have it retried, never mended.
 */
function errorOf(value: unknown): Record<string, unknown> {
  if (typeof value === 'string') return { code: 'unknown', message: value };
  const error = isRecord(value) ? value : {};
  return {
    ...error,
    code: typeof error.code === 'string' ? error.code : 'unknown',
    message: typeof error.message === 'string' ? error.message : 'The sender gave no error message.',
  };
}

/**
 * Where a contract finds a value: a dot path into the decoded payload (`data.task_id`), or
 * `header:<name>` for a value a header carries. Read with own-property lookups only, so a path can
 * never reach a prototype.
 */

/** The prefix of a path that names a header rather than a field. */
export const HEADER_PATH = 'header:';

/** A segment of a dot path: no dot, no space, none of the names that reach a prototype. */
const SEGMENT = /^[^.\s]{1,64}$/;
const FORBIDDEN = new Set(['__proto__', 'prototype', 'constructor']);
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

/** Whether `path` is `header:<name>` with a valid header name. */
export function isHeaderPath(path: unknown): path is string {
  return (
    typeof path === 'string' && path.startsWith(HEADER_PATH) && isHeaderName(path.slice(HEADER_PATH.length))
  );
}

/** A path as a reader: the value it names in a payload and its headers, `undefined` when absent. */
export type PathReader = (payload: Record<string, unknown>, headers: HeaderReader) => unknown;

/** The reader of a path already checked as a dot path (`a.b`) or a header path (`header:<name>`). */
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
