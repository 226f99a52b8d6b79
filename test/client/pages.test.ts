// Issue 26.2: lists answered as pages. The simulator pages with `lists`; the client follows the
// pages it recognises, and register() warns when it cannot tell a list is complete.
import { afterEach, describe, expect, test } from 'vitest';
import { createClient, type GatewayClient } from 'jobhook/client';
import { startGateway, type Gateway, type GatewayOptions } from 'jobhook/testing';
import { call } from '../gateway/support.js';

const cleanups: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/** A simulator holding five webhooks (ids 1 to 5, URLs /hook1 to /hook5) of the main account. */
async function withFiveWebhooks(
  lists: GatewayOptions['lists'],
  fetchShim?: (gateway: Gateway) => typeof fetch,
) {
  const gateway = await startGateway({ lists });
  cleanups.push(() => gateway.close());
  for (let n = 1; n <= 5; n++) {
    await call(gateway.baseUrl, 'POST', '/api/v1/webhooks', {
      apiKey: gateway.apiKey,
      body: { url: `http://127.0.0.1:9/hook${n}`, events: ['job.completed'] },
    });
  }
  const client = createClient({
    apiKey: gateway.apiKey,
    baseUrl: gateway.baseUrl,
    ...(fetchShim && { fetch: fetchShim(gateway) }),
  });
  return { gateway, client };
}

const lists = (gateway: Gateway) => gateway.requests.filter((r) => r.method === 'GET').length;
const ids = async (client: GatewayClient) => (await client.webhooks.list()).map((w) => w.id);

/** Rewrites each list answer of the simulator (its `data`) with `change`. */
function rewrite(change: (data: Record<string, unknown>, gateway: Gateway) => Record<string, unknown>) {
  return (gateway: Gateway): typeof fetch =>
    async (input, init) => {
      const response = await fetch(input, init);
      const envelope = (await response.json()) as { data: Record<string, unknown> };
      if (init?.method === 'GET' && envelope.data && 'items' in envelope.data) {
        envelope.data = change(envelope.data, gateway);
      }
      return new Response(JSON.stringify(envelope), { status: response.status, headers: response.headers });
    };
}

describe('the simulator answers lists as pages (lists option)', () => {
  test('cursor: { items, has_more, next_cursor }, the next page at ?cursor=', async () => {
    const { gateway } = await withFiveWebhooks({ pageSize: 2 });
    const first = await call(gateway.baseUrl, 'GET', '/api/v1/webhooks', { apiKey: gateway.apiKey });
    expect(first.json.data).toMatchObject({ has_more: true, next_cursor: expect.any(String) });
    expect(first.json.data.items.map((w: { id: number }) => w.id)).toEqual([1, 2]);
    const last = await call(gateway.baseUrl, 'GET', '/api/v1/webhooks?cursor=c4', { apiKey: gateway.apiKey });
    expect(last.json.data).toMatchObject({ has_more: false, next_cursor: null });
    const made = await call(gateway.baseUrl, 'GET', '/api/v1/webhooks?cursor=zz', { apiKey: gateway.apiKey });
    expect(made).toMatchObject({ status: 400, json: { error: { code: 'invalid_request' } } });
  });

  test('pages: { items, page, per_page, total, total_pages }, the next page at ?page=', async () => {
    const { gateway } = await withFiveWebhooks({ pageSize: 2, style: 'pages' });
    const third = await call(gateway.baseUrl, 'GET', '/api/v1/webhooks?page=3', { apiKey: gateway.apiKey });
    expect(third.json.data).toMatchObject({ page: 3, per_page: 2, total: 5, total_pages: 3 });
    expect(third.json.data.items.map((w: { id: number }) => w.id)).toEqual([5]);
  });

  test('an invalid lists option is refused', async () => {
    await expect(startGateway({ lists: { pageSize: 0 } })).rejects.toMatchObject({ code: 'invalid_options' });
  });
});

describe('client.webhooks.list() follows the pages it recognises', () => {
  test.each([
    ['cursor', { pageSize: 2 }, undefined],
    ['pages', { pageSize: 2, style: 'pages' as const }, undefined],
    [
      'next (a URL on the same gateway)',
      { pageSize: 2 },
      rewrite(({ next_cursor, has_more: _, ...rest }, gateway) => ({
        ...rest,
        next:
          typeof next_cursor === 'string' ? `${gateway.baseUrl}/api/v1/webhooks?cursor=${next_cursor}` : null,
      })),
    ],
  ])('%s: every webhook, in order, one request per page', async (_, paging, shim) => {
    const { gateway, client } = await withFiveWebhooks(paging, shim);
    expect(await ids(client)).toEqual([1, 2, 3, 4, 5]);
    expect(lists(gateway)).toBe(3);
  });

  test('a next URL on another origin is never followed (the key stays with the gateway)', async () => {
    const shim = rewrite(({ next_cursor: _, has_more: __, ...rest }) => ({
      ...rest,
      next: 'https://evil.test/api/v1/webhooks?cursor=c2',
    }));
    const { gateway, client } = await withFiveWebhooks({ pageSize: 2 }, shim);
    expect(await ids(client)).toEqual([1, 2]);
    expect(lists(gateway)).toBe(1);
  });

  test('an unmarked page is read as it is, in one request', async () => {
    const { gateway, client } = await withFiveWebhooks({ pageSize: 10, style: 'unmarked' });
    expect(await ids(client)).toEqual([1, 2, 3, 4, 5]);
    expect(lists(gateway)).toBe(1);
  });
});

describe('register() with a list it cannot tell is complete', () => {
  test('cursor pages: the webhook on page 3 is found and reused, no duplicate, no warning', async () => {
    const { gateway, client } = await withFiveWebhooks({ pageSize: 2 });
    const warnings: string[] = [];
    const result = await client.webhooks.register({
      url: 'http://127.0.0.1:9/hook5',
      events: ['job.completed'],
      onWarning: (message) => warnings.push(message),
    });
    expect(result).toMatchObject({ created: false, webhook: { id: 5 } });
    expect(warnings).toEqual([]);
    expect(gateway.requests.filter((r) => r.method === 'POST' && r.path === '/api/v1/webhooks')).toHaveLength(
      5,
    );
  });

  test('unmarked pages: the webhook is created, with one warning naming the risk of a duplicate', async () => {
    const { client } = await withFiveWebhooks({ pageSize: 2, style: 'unmarked' });
    const warnings: string[] = [];
    const result = await client.webhooks.register({
      url: 'http://127.0.0.1:9/hook5?token=private',
      events: ['job.completed'],
      onWarning: (message) => warnings.push(message),
    });
    expect(result.created).toBe(true);
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toMatch(/may have more pages than the client could read/);
    expect(warnings[0]).toMatch(/there are now two/);
    expect(warnings[0]).toContain('http://127.0.0.1:9/hook5');
    expect(warnings[0]).not.toContain('private');
  });

  test('{ items, total } with every item read is complete: a new webhook is created without a warning', async () => {
    const shim = rewrite(({ items }) => ({ items, total: (items as unknown[]).length }));
    const { client } = await withFiveWebhooks({ pageSize: 10, style: 'unmarked' }, shim);
    const warnings: string[] = [];
    const result = await client.webhooks.register({
      url: 'http://127.0.0.1:9/new',
      events: ['job.completed'],
      onWarning: (message) => warnings.push(message),
    });
    expect(result.created).toBe(true);
    expect(warnings).toEqual([]);
  });

  test('unmarked pages, but the webhook is on the first page: reused, no warning', async () => {
    const { client } = await withFiveWebhooks({ pageSize: 2, style: 'unmarked' });
    const warnings: string[] = [];
    const result = await client.webhooks.register({
      url: 'http://127.0.0.1:9/hook1',
      events: ['job.completed'],
      onWarning: (message) => warnings.push(message),
    });
    expect(result).toMatchObject({ created: false, webhook: { id: 1 } });
    expect(warnings).toEqual([]);
  });
});
