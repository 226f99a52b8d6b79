// The payload shapes the simulator can send, each written out in docs/gateway-simulator.md.
import { JobhookError, type JobCompletedEvent, type JobFailedEvent } from 'jobhook';
import type { SamplePayload } from 'jobhook/extend';

/**
 * How a delivery's payload is written:
 * - `default`: `{ id, type, created_at, data: { task_id, status, image_url | error } }`;
 * - `flat`: `{ event, task_id, status, image_url | error, timestamp }` (Unix seconds), no event id;
 * - `nested`: `{ id, type, created, data: { object: { id, status, output: { url } | null, error? } } }`;
 * - `type-in-header`: the default without `type`, which travels in an `x-event-type` header;
 * - a function: given the default payload, returns the body (a string is sent as it is, anything
 *   else as JSON).
 */
export type PayloadShape =
  'default' | 'flat' | 'nested' | 'type-in-header' | ((event: JobCompletedEvent | JobFailedEvent) => unknown);

export const PAYLOAD_SHAPES = ['default', 'flat', 'nested', 'type-in-header'] as const;

/** The header that carries the event type in the `type-in-header` shape. */
export const EVENT_TYPE_HEADER = 'x-event-type';

/** The body of one event in `shape`. */
export function shapedBody(shape: PayloadShape, event: SamplePayload): string {
  if (typeof shape === 'function') {
    // The default payload is a JobCompletedEvent or a JobFailedEvent as its type says.
    const written = shape(event as JobCompletedEvent | JobFailedEvent);
    const body = typeof written === 'string' ? written : JSON.stringify(written);
    if (typeof body !== 'string') {
      throw new JobhookError(
        'invalid_options',
        'startGateway: `payload` must return a string or a JSON value.',
      );
    }
    return body;
  }
  return JSON.stringify(shapedObject(shape, event));
}

/** The headers `shape` adds to every attempt of an event of `type`. */
export function shapeHeaders(shape: PayloadShape, type: string): Record<string, string> {
  return shape === 'type-in-header' ? { [EVENT_TYPE_HEADER]: type } : {};
}

function shapedObject(shape: (typeof PAYLOAD_SHAPES)[number], event: SamplePayload) {
  const { id, type, created_at, data } = event;
  const seconds = Math.floor(Date.parse(created_at) / 1000);
  const outcome = 'image_url' in data ? { image_url: data.image_url } : { error: data.error };
  switch (shape) {
    case 'default':
      return event;
    case 'flat':
      return { event: type, task_id: data.task_id, status: data.status, ...outcome, timestamp: seconds };
    case 'nested': {
      const output = 'image_url' in data ? { url: data.image_url } : null;
      const failure = 'error' in data ? { error: data.error } : {};
      return {
        id,
        type,
        created: seconds,
        data: { object: { id: data.task_id, status: data.status, output, ...failure } },
      };
    }
    case 'type-in-header':
      return { id, created_at, data };
  }
}
