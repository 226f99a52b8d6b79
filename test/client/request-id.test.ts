import { afterEach, beforeEach, expect, test } from 'vitest';
import { createClient, GatewayError } from 'jobhook/client';
import { startGateway, type Gateway } from 'jobhook/testing';

let gateway: Gateway;
beforeEach(async () => {
  gateway = await startGateway();
});
afterEach(() => gateway.close());

/** The simulator's answers with `request_id` taken out of the body: only the header carries it. */
const headerOnly: typeof fetch = async (input, init) => {
  const response = await fetch(input, init);
  const { request_id: _, ...rest } = (await response.json()) as Record<string, unknown>;
  return new Response(JSON.stringify(rest), { status: response.status, headers: response.headers });
};

test("a GatewayError's requestId falls back to the x-request-id header when the envelope has none", async () => {
  const client = createClient({ apiKey: 'sk_not_a_key', baseUrl: gateway.baseUrl, fetch: headerOnly });
  const error = await client.webhooks.list().catch((caught: unknown) => caught);
  expect(error).toBeInstanceOf(GatewayError);
  expect(error).toMatchObject({
    status: 401,
    code: 'unauthorized',
    requestId: expect.stringMatching(/^req_/),
  });
});

test("the envelope's request_id is preferred to the header", async () => {
  let sent: unknown;
  const otherHeader: typeof fetch = async (input, init) => {
    const response = await fetch(input, init);
    const text = await response.text();
    sent = (JSON.parse(text) as { request_id: unknown }).request_id;
    const headers = new Headers(response.headers);
    headers.set('x-request-id', 'req_from_the_header');
    return new Response(text, { status: response.status, headers });
  };
  const client = createClient({ apiKey: 'sk_not_a_key', baseUrl: gateway.baseUrl, fetch: otherHeader });
  const error = (await client.webhooks.list().catch((caught: unknown) => caught)) as GatewayError;
  expect(error.requestId).toBe(sent);
});
