import { afterEach, beforeEach, describe, expect, test } from 'vitest';
import { createReceiver } from 'jobhook';
import { createClient, registerWebhook, type GatewayClient } from 'jobhook/client';
import { startGateway, type Gateway } from 'jobhook/testing';
import { SECRET } from '../fixtures.js';

const URL_A = 'https://app.example.com/webhooks';

let gateway: Gateway;
let client: GatewayClient;
beforeEach(async () => {
  gateway = await startGateway();
  client = createClient({ apiKey: gateway.apiKey, baseUrl: gateway.baseUrl });
});
afterEach(() => gateway.close());

/** Write requests to the webhooks endpoints, in the order the gateway answered them. */
const writes = () =>
  gateway.requests
    .filter((r) => r.method !== 'GET' && r.path.startsWith('/api/v1/webhooks') && r.status === 200)
    .map((r) => `${r.method} ${r.path}`);

describe('registerWebhook', () => {
  test('creates the webhook with the secret and events, then reuses it across ten restarts', async () => {
    const first = await registerWebhook(client, {
      url: URL_A,
      secret: SECRET,
      events: ['job.completed', 'job.failed'],
    });
    expect(first.created).toBe(true);
    expect(first.webhook).toMatchObject({
      url: URL_A,
      events: ['job.completed', 'job.failed'],
      status: 'active',
    });
    expect(gateway.webhook(first.webhook.id)?.secret_key).toBe(SECRET);
    for (let restart = 0; restart < 10; restart++) {
      // A fresh client each time, as after a process restart; event order does not matter.
      const again = createClient({ apiKey: gateway.apiKey, baseUrl: gateway.baseUrl });
      const result = await registerWebhook(again, {
        url: URL_A,
        secret: SECRET,
        events: ['job.failed', 'job.completed'],
      });
      expect(result).toMatchObject({ created: false, deleted: [], webhook: { id: first.webhook.id } });
    }
    expect(await client.webhooks.list()).toHaveLength(1);
  });

  test('several instances starting at once end with one webhook', async () => {
    const instances = Array.from({ length: 8 }, () =>
      createClient({ apiKey: gateway.apiKey, baseUrl: gateway.baseUrl }),
    );
    const results = await Promise.all(
      instances.map((instance) =>
        registerWebhook(instance, { url: URL_A, secret: SECRET, events: ['job.completed'] }),
      ),
    );
    const remaining = await client.webhooks.list();
    expect(remaining).toHaveLength(1);
    // The rule every instance applies: the newest webhook for the URL wins.
    expect(remaining[0]!.id).toBe(Math.max(...results.map((r) => r.webhook.id)));
    // And a later start reuses the survivor.
    const later = await registerWebhook(client, { url: URL_A, secret: SECRET, events: ['job.completed'] });
    expect(later).toMatchObject({ created: false, webhook: { id: remaining[0]!.id } });
  });

  test('changed events create the new webhook before deleting the old one', async () => {
    const old = await registerWebhook(client, { url: URL_A, secret: SECRET, events: ['job.completed'] });
    const changed = await registerWebhook(client, {
      url: URL_A,
      secret: SECRET,
      events: ['job.completed', 'job.failed'],
    });
    expect(changed.created).toBe(true);
    expect(changed.deleted).toEqual([old.webhook.id]);
    expect(writes().slice(-2)).toEqual([
      'POST /api/v1/webhooks',
      `DELETE /api/v1/webhooks/${old.webhook.id}`,
    ]);
    expect((await client.webhooks.list()).map((w) => w.events)).toEqual([['job.completed', 'job.failed']]);
  });

  test('an explicit secret rotation creates a webhook with the new secret, then deletes the old one', async () => {
    const old = await registerWebhook(client, {
      url: URL_A,
      secret: 'old-secret',
      events: ['job.completed'],
    });
    const rotated = await registerWebhook(client, {
      url: URL_A,
      secret: 'new-secret',
      events: ['job.completed'],
      rotateSecret: true,
    });
    expect(rotated).toMatchObject({ created: true, deleted: [old.webhook.id] });
    expect(gateway.webhook(rotated.webhook.id)?.secret_key).toBe('new-secret');
    expect(writes().slice(-2)).toEqual([
      'POST /api/v1/webhooks',
      `DELETE /api/v1/webhooks/${old.webhook.id}`,
    ]);
    expect(await client.webhooks.list()).toHaveLength(1);
  });

  test('without rotateSecret a changed secret is not noticed (the gateway never shows it)', async () => {
    const old = await registerWebhook(client, {
      url: URL_A,
      secret: 'old-secret',
      events: ['job.completed'],
    });
    const same = await registerWebhook(client, {
      url: URL_A,
      secret: 'new-secret',
      events: ['job.completed'],
    });
    expect(same).toMatchObject({ created: false, webhook: { id: old.webhook.id } });
  });

  test('webhooks for other URLs are never touched', async () => {
    const others = [
      await client.webhooks.create({ url: 'https://other.example.com/webhooks', events: ['job.completed'] }),
      await client.webhooks.create({ url: 'https://other.example.com/webhooks', events: ['job.completed'] }),
      await client.webhooks.create({ url: URL_A + '/v2', events: ['job.failed'] }),
    ];
    await registerWebhook(client, { url: URL_A, secret: SECRET, events: ['job.completed'] });
    await registerWebhook(client, { url: URL_A, secret: SECRET, events: ['job.failed'] });
    await registerWebhook(client, { url: URL_A, secret: SECRET, events: ['job.failed'], rotateSecret: true });
    const ids = (await client.webhooks.list()).map((w) => w.id);
    for (const other of others) expect(ids).toContain(other.id);
    expect(ids).toHaveLength(others.length + 1);
  });

  test('a webhook that is not active is replaced, not reused', async () => {
    const old = await registerWebhook(client, { url: URL_A, secret: SECRET, events: ['job.completed'] });
    // The simulator only makes active webhooks; this fetch shows this one as revoked.
    const revoking: typeof fetch = async (input, init) => {
      const response = await fetch(input, init);
      if (
        (init?.method ?? 'GET') !== 'GET' ||
        !(input instanceof URL ? input.href : typeof input === 'string' ? input : input.url).endsWith(
          '/webhooks',
        )
      )
        return response;
      const envelope = (await response.json()) as { data: { id: number; status: string }[] };
      for (const w of envelope.data) if (w.id === old.webhook.id) w.status = 'revoked';
      return Response.json(envelope);
    };
    const viewing = createClient({ apiKey: gateway.apiKey, baseUrl: gateway.baseUrl, fetch: revoking });
    const result = await registerWebhook(viewing, { url: URL_A, secret: SECRET, events: ['job.completed'] });
    expect(result).toMatchObject({ created: true, deleted: [old.webhook.id] });
  });

  test('api_key_id is sent, and a webhook for another key is not reused', async () => {
    const unrestricted = await registerWebhook(client, {
      url: URL_A,
      secret: SECRET,
      events: ['job.completed'],
    });
    const restricted = await registerWebhook(client, {
      url: URL_A,
      secret: SECRET,
      events: ['job.completed'],
      apiKeyId: gateway.apiKeyId,
    });
    expect(restricted).toMatchObject({
      created: true,
      webhook: { api_key_id: gateway.apiKeyId },
      deleted: [unrestricted.webhook.id],
    });
  });

  test('refuses an empty event list or a relative URL before calling the gateway', async () => {
    await expect(registerWebhook(client, { url: URL_A, events: [] })).rejects.toThrow(/event/);
    await expect(registerWebhook(client, { url: '/webhooks', events: ['job.completed'] })).rejects.toThrow(
      /url/,
    );
    expect(gateway.requests).toHaveLength(0);
  });
});

describe('receiver.register', () => {
  test("registers with the receiver's first secret and the types it handles", async () => {
    const receiver = createReceiver({ secret: [SECRET, 'older-secret'], results: false });
    receiver.onJobFailed(() => undefined);
    const { webhook, created } = await receiver.register({ client, url: URL_A });
    expect(created).toBe(true);
    expect(webhook.events).toEqual(['job.failed']);
    expect(gateway.webhook(webhook.id)?.secret_key).toBe(SECRET);
  });

  test('with results kept (the default), both job outcomes: a wait must learn of a failure too', async () => {
    const receiver = createReceiver({ secret: SECRET }).onJobCompleted(() => undefined);
    const { webhook } = await receiver.register({ client, url: URL_A });
    expect(webhook.events).toEqual(['job.completed', 'job.failed']);
  });

  test('an onAny handler, or no handler at all, subscribes to every type the gateway sends', async () => {
    const withAny = createReceiver({ secret: SECRET }).onAny(() => undefined);
    expect((await withAny.register({ client, url: URL_A })).webhook.events.sort()).toEqual([
      'job.completed',
      'job.failed',
    ]);
    const bare = createReceiver({ secret: SECRET });
    const result = await bare.register({ client, url: URL_A + '/b' });
    expect(result.webhook.events.sort()).toEqual(['job.completed', 'job.failed']);
  });

  test('a custom event type the gateway cannot send is left out; explicit events win', async () => {
    const { z } = await import('zod');
    const receiver = createReceiver({
      secret: SECRET,
      results: false,
      schemas: { 'job.started': z.looseObject({ type: z.literal('job.started') }) },
    });
    receiver.on('job.started', () => undefined).onJobCompleted(() => undefined);
    expect((await receiver.register({ client, url: URL_A })).webhook.events).toEqual(['job.completed']);
    const explicit = await receiver.register({ client, url: URL_A, events: ['job.failed'] });
    expect(explicit.webhook.events).toEqual(['job.failed']);
  });
});
