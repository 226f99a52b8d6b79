// Shared fixtures for tests: payloads in the design's shape and a fixed secret.
import { samplePayload } from '../../src/events/sample-payload.js';

/** A Standard Webhooks secret (base64 after the prefix). */
export const SECRET = `whsec_${Buffer.from('jobhook-test-secret-0123456789ab').toString('base64')}`;

/** A `job.completed` payload (the shared builder, fixed time and URL), with `overrides` on top. */
export function completedPayload(overrides: Record<string, unknown> = {}) {
  const payload = samplePayload('job.completed', {
    createdAt: '2026-11-21T10:00:00Z',
    imageUrl: 'https://img.example/1.png',
  });
  return { ...payload, ...overrides };
}

/** A `job.failed` payload (the shared builder, fixed time and error), with `overrides` on top. */
export function failedPayload(overrides: Record<string, unknown> = {}) {
  const payload = samplePayload('job.failed', {
    createdAt: '2026-11-21T10:00:00Z',
    error: { code: 'content_policy', message: 'The prompt was refused.' },
  });
  return { ...payload, ...overrides };
}

/** A promise with its resolve function outside, for handlers a test releases by hand. */
export function deferred<T = void>() {
  let resolve!: (value: T) => void;
  const promise = new Promise<T>((r) => (resolve = r));
  return { promise, resolve };
}
