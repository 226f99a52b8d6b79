/** The event types the gateway delivers, the one list of them (apart from the schemas, so it loads no zod). */
export const GATEWAY_EVENT_TYPES = ['job.completed', 'job.failed'] as const;

/** An event type the gateway delivers. */
export type GatewayEventType = (typeof GATEWAY_EVENT_TYPES)[number];

/** Whether `type` is one the gateway delivers. */
export function isGatewayEventType(type: unknown): type is GatewayEventType {
  return (GATEWAY_EVENT_TYPES as readonly unknown[]).includes(type);
}

/** What became of an event: `handled`, `duplicate`, `busy`, `failed` (runs again) or `invalid` (for good). */
export type EventOutcome = 'handled' | 'duplicate' | 'busy' | 'failed' | 'invalid';

/** What a sample payload may be given; anything left out is made up (fresh ids, now, an example URL). */
export interface SamplePayloadFields {
  /** The event's own id, `evt_…`. */
  id?: string;
  taskId?: string;
  /** ISO 8601, seconds precision. */
  createdAt?: string;
  /** `job.completed` only. */
  imageUrl?: string;
  /** `job.failed` only. */
  error?: { code: string; message: string };
}

/** `data` of a sample `job.completed` payload. */
export interface CompletedData {
  task_id: string;
  status: 'completed';
  image_url: string;
}

/** `data` of a sample `job.failed` payload. */
export interface FailedData {
  task_id: string;
  status: 'failed';
  error: { code: string; message: string };
}

/** A payload as {@link samplePayload} builds it. */
export interface SamplePayload<D = CompletedData | FailedData> {
  id: string;
  type: GatewayEventType;
  created_at: string;
  data: D;
}

/** A delivery payload in the gateway's shape: the one builder for `jobhook send`, the simulator and tests. */
export function samplePayload(
  type: 'job.completed',
  fields?: SamplePayloadFields,
): SamplePayload<CompletedData>;
export function samplePayload(type: 'job.failed', fields?: SamplePayloadFields): SamplePayload<FailedData>;
export function samplePayload(type: GatewayEventType, fields?: SamplePayloadFields): SamplePayload;
export function samplePayload(type: GatewayEventType, fields: SamplePayloadFields = {}): SamplePayload {
  const taskId = fields.taskId ?? `task_${randomHex(16)}`;
  const data =
    type === 'job.completed'
      ? {
          task_id: taskId,
          status: 'completed' as const,
          image_url: fields.imageUrl ?? `https://images.example.com/${taskId}.png`,
        }
      : {
          task_id: taskId,
          status: 'failed' as const,
          error: fields.error ?? {
            code: 'generation_failed',
            message: 'The model could not render this prompt.',
          },
        };
  return {
    id: fields.id ?? `evt_${randomHex(24)}`,
    type,
    created_at: fields.createdAt ?? new Date().toISOString().replace(/\.\d{3}Z$/, 'Z'),
    data,
  };
}

function randomHex(length: number): string {
  return globalThis.crypto.randomUUID().replaceAll('-', '').slice(0, length).padEnd(length, '0');
}
