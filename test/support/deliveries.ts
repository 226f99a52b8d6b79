// Shared fixtures for tests: payloads in the design's shape and a fixed secret.
import { randomUUID } from 'node:crypto';

/** A Standard Webhooks secret (base64 after the prefix). */
export const SECRET = `whsec_${Buffer.from('jobhook-test-secret-0123456789ab').toString('base64')}`;

export function completedPayload(overrides: Record<string, unknown> = {}) {
  return {
    id: `evt_${randomUUID()}`,
    type: 'job.completed',
    created_at: '2026-11-21T10:00:00Z',
    data: { task_id: `task_${randomUUID()}`, status: 'completed', image_url: 'https://img.example/1.png' },
    ...overrides,
  };
}

export function failedPayload(overrides: Record<string, unknown> = {}) {
  return {
    id: `evt_${randomUUID()}`,
    type: 'job.failed',
    created_at: '2026-11-21T10:00:00Z',
    data: {
      task_id: `task_${randomUUID()}`,
      status: 'failed',
      error: { code: 'content_policy', message: 'The prompt was refused.' },
    },
    ...overrides,
  };
}

/** A promise with its resolve function outside, for handlers a test releases by hand. */
export function deferred<T = void>() {
  let resolve!: (value: T) => void;
  const promise = new Promise<T>((r) => (resolve = r));
  return { promise, resolve };
}
