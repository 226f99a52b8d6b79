// README's Next.js recipe: the route module (examples/nextjs/app/webhooks/route.ts) imported as
// Next.js imports it, and its exported POST called with a real Request, as Next.js calls it.
import { signDelivery } from 'jobhook/testing';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { completed, SECRET } from '../adapters/fixtures.js';

describe('Next.js App Router route handler (Node runtime)', () => {
  beforeEach(() => {
    vi.stubEnv('WEBHOOK_SECRET', SECRET);
    vi.resetModules();
  });
  afterEach(() => vi.unstubAllEnvs());

  const request = (delivery: { headers: Record<string, string>; body: string | Uint8Array }) =>
    new Request('http://localhost:3000/webhooks', {
      method: 'POST',
      headers: delivery.headers,
      body: delivery.body as BodyInit,
    });

  it('answers a signed delivery 200 and runs the handler; a forged one 401', async () => {
    const logged = vi.spyOn(console, 'log').mockImplementation(() => undefined);
    const route = await import('../../examples/nextjs/app/webhooks/route.js');
    expect(route.runtime).toBe('nodejs');
    const payload = completed();

    const response = await route.POST(request(signDelivery({ secret: SECRET, payload })));
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual({ ok: true });
    expect(logged).toHaveBeenCalledWith('completed', payload.data.task_id, payload.data.image_url);

    const forged = await route.POST(
      request(signDelivery({ secret: 'another-secret', payload: completed() })),
    );
    expect(forged.status).toBe(401);
    logged.mockRestore();
  });
});
