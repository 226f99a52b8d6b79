/**
 * Where a sender's payload keeps each value, found by matching the values the probe knows: the
 * task id it submitted, the image URL the status endpoint gave, and which delivery was the
 * completed job and which the failed one.
 */
import { HEADER_PATH, isRecord } from 'jobhook/extend';

/** What was learnt of the payload (the report's `payload`). */
export interface PayloadFinding {
  /** A dot path such as `type`, or `header:<name>`. */
  typePath: string | null;
  /** The sender's values at `typePath` for a completed and for a failed job. */
  typeValues: { completed: string; failed: string } | null;
  taskIdPath: string | null;
  imageUrlPath: string | null;
  errorPath: string | null;
  /** The event's own id; `null` when the payload has none (or it changed between attempts). */
  eventIdPath: string | null;
  createdAtPath: string | null;
  /** The fields filled in by a guess rather than seen (a failed delivery was not observed, say). */
  assumed: string[];
  /** The completed delivery's payload, each string cut to 120 characters and each array to 5 items. */
  sample: unknown;
}

/** One value in a payload, with its dot path. */
interface Leaf {
  path: string;
  key: string;
  depth: number;
  value: unknown;
}

const TYPE_KEYS = /^(type|event|event_type|eventType|kind|topic|action)$/;
const EVENT_ID_KEYS = /^(id|event_id|eventId|uuid|webhook_id|message_id)$/;
const CREATED_KEYS = /^(created_at|createdAt|created|timestamp|time|occurred_at|occurredAt|event_time|date)$/;
const COMPLETED_WORDS = /complete|succe|finish|done|ready/i;

export interface PayloadEvidence {
  /** The completed job's delivery: its decoded body and its headers. */
  completed: { payload: unknown; headers: Record<string, string> };
  /** The failed job's delivery, when one was asked for and came. */
  failed: { payload: unknown; headers: Record<string, string>; taskId: string } | undefined;
  taskId: string;
  /** From the status endpoint once completed. */
  imageUrl: string | undefined;
}

export function detectPayload({ completed, failed, taskId, imageUrl }: PayloadEvidence): PayloadFinding {
  const leaves = leavesOf(completed.payload);
  const assumed: string[] = [];
  const taskIdPath = best(
    leaves.filter((leaf) => leaf.value === taskId),
    (leaf) => (/task/i.test(leaf.key) ? 10 : 0),
  );
  let imageUrlPath =
    imageUrl === undefined
      ? undefined
      : best(
          leaves.filter((leaf) => leaf.value === imageUrl),
          () => 0,
        );
  if (imageUrlPath === undefined) {
    imageUrlPath = best(
      leaves.filter((leaf) => typeof leaf.value === 'string' && /^https?:\/\//.test(leaf.value)),
      (leaf) => (/url|image|output/i.test(leaf.path) ? 10 : 0),
    );
    if (imageUrlPath !== undefined) assumed.push('imageUrlPath');
  }
  const type = typeOf(completed, leaves, failed);
  if (type?.assumed) assumed.push('typeValues.failed');
  const eventIdPath = best(
    leaves.filter(
      (leaf) => EVENT_ID_KEYS.test(leaf.key) && typeof leaf.value === 'string' && leaf.value !== taskId,
    ),
    (leaf) => (leaf.key === 'id' ? 5 : 0),
  );
  const createdAtPath = best(
    leaves.filter((leaf) => CREATED_KEYS.test(leaf.key) && isTime(leaf.value)),
    (leaf) => (leaf.key === 'created_at' ? 5 : 0),
  );
  let errorPath: string | undefined;
  if (failed) {
    const failedLeaves = leavesOf(failed.payload, true);
    errorPath = best(
      failedLeaves.filter(
        (leaf) =>
          /error|failure|reason/i.test(leaf.key) && (isRecord(leaf.value) || typeof leaf.value === 'string'),
      ),
      (leaf) => (isRecord(leaf.value) && typeof leaf.value.message === 'string' ? 10 : 0),
    );
  }
  if (errorPath === undefined && taskIdPath !== undefined) {
    const cut = taskIdPath.lastIndexOf('.');
    errorPath = cut === -1 ? 'error' : `${taskIdPath.slice(0, cut)}.error`;
    assumed.push('errorPath');
  }
  return {
    typePath: type?.path ?? null,
    typeValues: type?.values ?? null,
    taskIdPath: taskIdPath ?? null,
    imageUrlPath: imageUrlPath ?? null,
    errorPath: errorPath ?? null,
    eventIdPath: eventIdPath ?? null,
    createdAtPath: createdAtPath ?? null,
    assumed,
    sample: sampleOf(completed.payload),
  };
}

/**
 * The path that holds the event type: a header or a field whose value says "completed", scored by
 * its name and value (`job.completed` in a field named `type` beats `completed` in `status`);
 * with a failed delivery, only a path whose value differs there.
 */
function typeOf(
  completed: PayloadEvidence['completed'],
  leaves: Leaf[],
  failed: PayloadEvidence['failed'],
): { path: string; values: { completed: string; failed: string }; assumed: boolean } | undefined {
  const candidates = [
    ...Object.entries(completed.headers).map(([name, value]) => ({
      path: `${HEADER_PATH}${name}`,
      key: name,
      depth: 0,
      value,
    })),
    ...leaves,
  ].filter(
    (leaf): leaf is Leaf & { value: string } =>
      typeof leaf.value === 'string' && COMPLETED_WORDS.test(leaf.value),
  );
  const failedValue = (path: string): unknown => {
    if (!failed) return undefined;
    if (path.startsWith(HEADER_PATH)) return failed.headers[path.slice(HEADER_PATH.length)];
    return leavesOf(failed.payload).find((leaf) => leaf.path === path)?.value;
  };
  const scored = candidates
    .map((leaf) => {
      const other = failedValue(leaf.path);
      if (failed && (typeof other !== 'string' || other === leaf.value)) return undefined;
      const key = leaf.path.startsWith(HEADER_PATH) ? /event|type/i.test(leaf.key) : TYPE_KEYS.test(leaf.key);
      const score = (leaf.value === 'job.completed' ? 100 : 0) + (key ? 50 : 0) - leaf.depth;
      return { leaf, other: other as string | undefined, score };
    })
    .filter((entry) => entry !== undefined)
    .sort((a, b) => b.score - a.score);
  const chosen = scored[0];
  if (!chosen) return undefined;
  const value = chosen.leaf.value;
  if (chosen.other !== undefined)
    return { path: chosen.leaf.path, values: { completed: value, failed: chosen.other }, assumed: false };
  // Not seen: the completed word replaced by "failed" (`job.completed` gives `job.failed`).
  const guess = value.replace(/completed|complete|succeeded|success|finished|done|ready/i, 'failed');
  return { path: chosen.leaf.path, values: { completed: value, failed: guess }, assumed: true };
}

/** The path of the highest-scoring leaf, the shallowest on a tie. */
function best(leaves: Leaf[], score: (leaf: Leaf) => number): string | undefined {
  let chosen: Leaf | undefined;
  let top = Number.NEGATIVE_INFINITY;
  for (const leaf of leaves) {
    const value = score(leaf) - leaf.depth;
    if (value > top) [chosen, top] = [leaf, value];
  }
  return chosen?.path;
}

/** Every value of a JSON document with its dot path (objects too with `withObjects`); keys with a dot are skipped. */
function leavesOf(document: unknown, withObjects = false): Leaf[] {
  const leaves: Leaf[] = [];
  const walk = (value: unknown, path: string[]) => {
    if (leaves.length > 2000 || path.length > 16) return;
    const node = { path: path.join('.'), key: path[path.length - 1] ?? '', depth: path.length - 1, value };
    if (isRecord(value) || Array.isArray(value)) {
      if (withObjects && path.length > 0) leaves.push(node);
      const entries = Array.isArray(value) ? value.slice(0, 20).entries() : Object.entries(value);
      for (const [key, child] of entries) {
        const name = String(key);
        if (!name.includes('.') && name !== '' && !/\s/.test(name)) walk(child, [...path, name]);
      }
    } else if (path.length > 0) leaves.push(node);
  };
  walk(document, []);
  return leaves;
}

function isTime(value: unknown): boolean {
  if (typeof value === 'number') return Number.isFinite(value) && value > 1e9;
  return typeof value === 'string' && /^\d{4}-\d{2}-\d{2}T/.test(value) && !Number.isNaN(Date.parse(value));
}

/** A copy small enough to print: strings cut to 120 characters, arrays to 5 items, depth to 6. */
function sampleOf(value: unknown, depth = 0): unknown {
  if (typeof value === 'string') return value.length > 120 ? `${value.slice(0, 120)}…` : value;
  if (depth >= 6 && (isRecord(value) || Array.isArray(value))) return '…';
  if (Array.isArray(value)) return value.slice(0, 5).map((item) => sampleOf(item, depth + 1));
  if (isRecord(value)) {
    return Object.fromEntries(
      Object.entries(value)
        .slice(0, 30)
        .map(([key, item]) => [key, sampleOf(item, depth + 1)]),
    );
  }
  return value;
}
