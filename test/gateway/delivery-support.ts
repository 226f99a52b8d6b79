import { afterEach, expect } from 'vitest';
import { startGateway, type Gateway, type GatewayOptions } from 'jobhook/testing';
import { call, startSink, type Json } from './support.js';

/**
 * The set-up of the delivery tests: a simulator with fast jobs and retries, receiving endpoints,
 * webhooks and jobs made on the wire; everything started here is stopped after each test.
 */
export const SECRET = 'whsec_' + Buffer.from('a-32-byte-secret-for-the-tests!!').toString('base64');

export const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

export async function start(options: GatewayOptions = {}): Promise<Gateway> {
  const gateway = await startGateway({
    jobs: { stepMs: 1 },
    deliveries: { retryDelaysMs: [1, 1, 1] },
    ...options,
  });
  cleanups.push(() => gateway.close());
  return gateway;
}

export async function sink(respond?: Parameters<typeof startSink>[0]) {
  const s = await startSink(respond);
  cleanups.push(s.close);
  return s;
}

export async function createWebhook(
  gateway: Gateway,
  body: Record<string, unknown>,
  apiKey = gateway.apiKey,
) {
  const { status, json } = await call(gateway.baseUrl, 'POST', '/api/v1/webhooks', { apiKey, body });
  expect(status).toBe(200);
  return json.data.id as number;
}

export async function submit(gateway: Gateway, apiKey = gateway.apiKey, prompt = 'p') {
  const { json } = await call(gateway.baseUrl, 'POST', '/api/v1/images/generate', {
    apiKey,
    body: { model: 'm', prompt },
  });
  return json.data.task_id as string;
}

/** The webhook as the list answers it, with its counters. */
export async function listed(gateway: Gateway, id: number) {
  const { json } = await call(gateway.baseUrl, 'GET', '/api/v1/webhooks', { apiKey: gateway.apiKey });
  return json.data.find((webhook: Json) => webhook.id === id);
}
