// The one fixtures module of the tests: the test secret, payloads in the design's shape,
// deferred() and streamedPost(). Use these rather than a constant or helper of your own; a test
// that needs a secret of a particular form (rotation, redaction, another runtime) says why beside
// its own.
import { samplePayload } from '../src/events/event-types.js';

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

/** A POST to the webhook route with a streamed body, for `receiver.fetch`. */
export function streamedPost(headers: Record<string, string>, body: ReadableStream<Uint8Array>): Request {
  // `duplex` is required for a streamed body and not yet in TypeScript's RequestInit.
  return new Request('http://127.0.0.1/webhooks', {
    method: 'POST',
    headers,
    body,
    duplex: 'half',
  } as RequestInit);
}

/** A promise with its resolve function outside, so a test awaits or releases a handler instead of sleeping. */
export function deferred<T = void>() {
  let resolve!: (value: T) => void;
  const promise = new Promise<T>((r) => (resolve = r));
  return { promise, resolve };
}
