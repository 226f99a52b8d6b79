import { jobCompletedSchema, jobFailedSchema } from './schemas.js';
import type { StandardSchemaV1 } from './standard-schema.js';
import { isRecord } from '../common/errors.js';

/**
 * The default schemas' checks written out by hand, for the hot path: zod's loose-object parse
 * copies each object level and walks its unknown keys, a cost bench/NOTES.md measures. Each accepts exactly what its zod schema accepts (a
 * property test compares the two on generated payloads); a payload it accepts is passed on as it
 * is, and one it refuses goes to zod, which then says what is wrong. Schemas of your own are
 * always run as they are.
 */
const QUICK_CHECKS = new Map<StandardSchemaV1, (payload: Record<string, unknown>) => boolean>([
  [
    jobCompletedSchema,
    (payload) => {
      if (!isEnvelope(payload, 'job.completed')) return false;
      const { data } = payload;
      return (
        isRecord(data) &&
        typeof data.task_id === 'string' &&
        data.status === 'completed' &&
        typeof data.image_url === 'string'
      );
    },
  ],
  [
    jobFailedSchema,
    (payload) => {
      if (!isEnvelope(payload, 'job.failed')) return false;
      const { data } = payload;
      if (!isRecord(data) || typeof data.task_id !== 'string' || data.status !== 'failed') return false;
      const { error } = data;
      return isRecord(error) && typeof error.code === 'string' && typeof error.message === 'string';
    },
  ],
]);

/** Whether `payload` passes `schema` for certain; `false` means "ask the schema". */
export function passesQuickCheck(schema: StandardSchemaV1, payload: Record<string, unknown>): boolean {
  const check = QUICK_CHECKS.get(schema);
  return check !== undefined && check(payload);
}

function isEnvelope(payload: Record<string, unknown>, type: string): boolean {
  return typeof payload.id === 'string' && payload.type === type && typeof payload.created_at === 'string';
}
