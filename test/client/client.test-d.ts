import { expectTypeOf, test } from 'vitest';
import { createReceiver } from 'jobhook';
import type { GatewayError, GatewayNetworkError, GatewayTimeoutError } from 'jobhook/client';
import {
  createClient,
  registerWebhook,
  type Balances,
  type GenerateImageResult,
  type ImageTask,
  type RegisterWebhookResult,
  type Webhook,
} from 'jobhook/client';

const client = createClient({ apiKey: 'k', baseUrl: 'https://gw.example' });

test("responses are typed with the document's snake_case names, and keep unknown fields as unknown", () => {
  expectTypeOf(client.webhooks.list()).resolves.toEqualTypeOf<Webhook[]>();
  expectTypeOf<Webhook['id']>().toEqualTypeOf<number>();
  expectTypeOf<Webhook['total_sent']>().toEqualTypeOf<number | undefined>();
  expectTypeOf<Webhook['last_error']>().toEqualTypeOf<string | null | undefined>();
  expectTypeOf<Webhook['something_new']>().toEqualTypeOf<unknown>();
  expectTypeOf(
    client.images.generate({ model: 'm', prompt: 'p' }),
  ).resolves.toEqualTypeOf<GenerateImageResult>();
  expectTypeOf<GenerateImageResult['remaining_credits']>().toEqualTypeOf<number>();
  expectTypeOf(client.images.get('t')).resolves.toEqualTypeOf<ImageTask>();
  expectTypeOf(client.account.balances()).resolves.toEqualTypeOf<Balances>();
  expectTypeOf(client.keys.create({ title: 't' }))
    .resolves.toHaveProperty('api_key')
    .toEqualTypeOf<string>();
  expectTypeOf(client.webhooks.delete(1)).resolves.toEqualTypeOf<{ id: number }>();
});

test('requests are checked', () => {
  // @ts-expect-error: events is required
  void client.webhooks.create({ url: 'https://x' });
  // @ts-expect-error: a webhook id is a number
  void client.webhooks.delete('1');
  // @ts-expect-error: title is required
  void client.keys.create({});
});

test('the error classes form one family', () => {
  expectTypeOf<GatewayNetworkError>().toExtend<GatewayError>();
  expectTypeOf<GatewayTimeoutError>().toExtend<GatewayError>();
  expectTypeOf<GatewayError['status']>().toEqualTypeOf<number>();
  expectTypeOf<GatewayError['requestId']>().toEqualTypeOf<string | undefined>();
});

test('registration resolves to { webhook, created }', () => {
  expectTypeOf(
    registerWebhook(client, { url: 'https://x', events: ['job.completed'] }),
  ).resolves.toEqualTypeOf<RegisterWebhookResult>();
  const receiver = createReceiver({ secret: 's' });
  expectTypeOf(
    receiver.register({ client, url: 'https://x' }),
  ).resolves.toEqualTypeOf<RegisterWebhookResult>();
  // @ts-expect-error: url is required
  void receiver.register({ client });
  // @ts-expect-error: the options of createClient are not a client
  void receiver.register({ client: { apiKey: 'k', baseUrl: 'https://x' }, url: 'https://x' });
  // The receiver fills in its first secret; one that picks secrets per tenant passes each one.
  void receiver.register({ client, url: 'https://x', secret: 'whsec_other' });
  // @ts-expect-error: a secret is a string
  void receiver.register({ client, url: 'https://x', secret: 42 });
});
