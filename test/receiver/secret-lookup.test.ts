// One receiver for many webhooks with their own secrets: `secret` as a function picks them per
// delivery (here by the tenant in the path, on one route), over a real HTTP server.
import { createServer, type RequestListener } from 'node:http';
import { createReceiver, type Receiver } from 'jobhook';
import { createClient } from 'jobhook/client';
import { nodeHandler } from 'jobhook/node';
import { signDelivery, startGateway } from 'jobhook/testing';
import { afterEach, describe, expect, it } from 'vitest';
import { completed, type JsonAnswer } from '../adapters/fixtures.js';
import { listen, type Running } from '../adapters/http.js';

const secretOf = (name: string) =>
  `whsec_${Buffer.from(`tenant-${name}-secret-0123456789abcdef`).toString('base64')}`;
const ACME = secretOf('acme');
const GLOBEX = secretOf('globex');
const GLOBEX_NEXT = secretOf('globex-next');

const closing: (() => unknown)[] = [];
afterEach(async () => {
  for (const close of closing.splice(0).reverse()) await close();
});

/** A receiver on one route for every tenant, whose secrets come from `secrets` by path. */
async function serve(
  lookup: (tenant: string) => unknown,
  options: { bodyTimeoutMs?: number } = {},
): Promise<{
  server: Running;
  receiver: Receiver;
  runs: { tenant: string | undefined; id: string }[];
  errors: string[];
}> {
  const runs: { tenant: string | undefined; id: string }[] = [];
  const errors: string[] = [];
  const receiver = createReceiver({
    secret: ({ url }) => lookup(new URL(url!).pathname.split('/')[2] ?? '') as string,
    logger: { error: (message) => errors.push(message), warn: (message) => errors.push(message) },
    ...options,
  }).onJobCompleted((event, context) => {
    runs.push({ tenant: undefined, id: event.data.task_id });
    void context;
  });
  const server = await listen(createServer(nodeHandler(receiver)));
  closing.push(
    () => server.close(),
    () => receiver.close(),
  );
  return { server, receiver, runs, errors };
}

async function post(url: string, secret: string, payload: object = completed()) {
  const delivery = signDelivery({ secret, payload });
  const response = await fetch(url, {
    method: 'POST',
    headers: delivery.headers,
    body: delivery.body as BodyInit,
  });
  return { status: response.status, body: (await response.json()) as JsonAnswer };
}

const tenants: Record<string, string | string[]> = { acme: ACME, globex: GLOBEX };

describe('secret as a function', () => {
  it("two tenants on one route: each verified with its own secret, never with the other's", async () => {
    const { server, runs } = await serve((tenant) => tenants[tenant]);
    expect((await post(`${server.origin}/webhooks/acme`, ACME)).status).toBe(200);
    expect((await post(`${server.origin}/webhooks/globex`, GLOBEX)).status).toBe(200);
    const crossed = await post(`${server.origin}/webhooks/acme`, GLOBEX);
    expect(crossed).toMatchObject({ status: 401, body: { error: { code: 'invalid_signature' } } });
    // An unknown tenant gets exactly the answer of a wrong signature: nothing tells them apart.
    const unknown = await post(`${server.origin}/webhooks/initech`, ACME);
    expect(unknown).toEqual(crossed);
    expect(runs).toHaveLength(2);
  });

  it("rotates one tenant's secret while the other is untouched", async () => {
    const rotating: Record<string, string | string[]> = { acme: ACME, globex: [GLOBEX, GLOBEX_NEXT] };
    const { server } = await serve((tenant) => rotating[tenant]);
    expect((await post(`${server.origin}/webhooks/globex`, GLOBEX)).status).toBe(200);
    expect((await post(`${server.origin}/webhooks/globex`, GLOBEX_NEXT)).status).toBe(200);
    expect((await post(`${server.origin}/webhooks/acme`, GLOBEX_NEXT)).status).toBe(401);
    rotating.globex = GLOBEX_NEXT; // the rotation ends: the old secret no longer passes
    expect((await post(`${server.origin}/webhooks/globex`, GLOBEX)).status).toBe(401);
    expect((await post(`${server.origin}/webhooks/acme`, ACME)).status).toBe(200);
  });

  it('a lookup that throws or rejects is a 500 the sender retries, logged without a secret it returned', async () => {
    let failing = false;
    const { server, runs, errors } = await serve((tenant) => {
      if (failing) throw new Error(`tenant store down while reading ${ACME}`);
      return tenants[tenant];
    });
    // Secrets a lookup returned are redacted from then on (one it never returned cannot be known).
    expect((await post(`${server.origin}/webhooks/acme`, ACME)).status).toBe(200);
    failing = true;
    const payload = completed();
    const first = await post(`${server.origin}/webhooks/acme`, ACME, payload);
    expect(first).toMatchObject({ status: 500, body: { error: { code: 'internal_error' } } });
    expect(errors.join('\n')).toContain('`secret` function failed');
    expect(errors.join('\n')).not.toContain(ACME);
    failing = false;
    expect((await post(`${server.origin}/webhooks/acme`, ACME, payload)).status).toBe(200);
    expect(runs).toHaveLength(2);

    const rejecting = await serve(() => Promise.reject(new Error('no tenant store')));
    expect((await post(`${rejecting.server.origin}/webhooks/acme`, ACME)).status).toBe(500);
  });

  it('a slow lookup is awaited up to bodyTimeoutMs, then answered 500; other tenants do not wait for it', async () => {
    const slow: ((value: string) => void)[] = [];
    const { server, runs } = await serve(
      (tenant) =>
        tenant === 'slow' ? new Promise<string>((resolve) => slow.push(resolve)) : tenants[tenant],
      { bodyTimeoutMs: 300 },
    );
    const hanging = post(`${server.origin}/webhooks/slow`, ACME);
    expect((await post(`${server.origin}/webhooks/acme`, ACME)).status).toBe(200);
    expect(await hanging).toMatchObject({ status: 500 });
    slow.forEach((resolve) => resolve(ACME)); // too late: the delivery was answered
    expect(runs).toHaveLength(1);
  });

  it('refuses what is not a secret with a 500, and a lookup result of an empty list with a 401', async () => {
    const odd = await serve((tenant) => (tenant === 'empty' ? [] : 42));
    expect((await post(`${odd.server.origin}/webhooks/number`, ACME)).status).toBe(500);
    expect((await post(`${odd.server.origin}/webhooks/empty`, ACME)).status).toBe(401);
  });

  it('registers one webhook per tenant with its own secret, and their deliveries verify', async () => {
    const gateway = await startGateway({ jobs: { stepMs: 1 } });
    closing.push(() => gateway.close());
    const { server, receiver, runs } = await serve((tenant) => tenants[tenant]);
    const client = createClient({ apiKey: gateway.apiKey, baseUrl: gateway.baseUrl });
    await expect(receiver.register({ client, url: `${server.origin}/webhooks/acme` })).rejects.toMatchObject({
      code: 'invalid_options',
    });
    await receiver.register({ client, url: `${server.origin}/webhooks/acme`, secret: ACME });
    const { task_id } = await client.images.generate({ model: 'm', prompt: 'p' });
    await expect.poll(() => runs.map((run) => run.id), { timeout: 10_000 }).toContain(task_id);
  });

  it('receives the URL from the fetch handler (Workers, Deno, Bun, Hono)', async () => {
    const seen: (string | undefined)[] = [];
    const receiver = createReceiver({
      secret: ({ url }) => {
        seen.push(url);
        return tenants[new URL(url!).pathname.split('/')[2] ?? ''];
      },
    }).onJobCompleted(() => {});
    const delivery = signDelivery({ secret: GLOBEX, payload: completed() });
    const send = (url: string) =>
      receiver.fetch(
        new Request(url, { method: 'POST', headers: delivery.headers, body: delivery.body as BodyInit }),
      );
    expect((await send('https://my.app/webhooks/acme')).status).toBe(401);
    expect((await send('https://my.app/webhooks/globex')).status).toBe(200);
    expect(seen).toEqual(['https://my.app/webhooks/acme', 'https://my.app/webhooks/globex']);
  });

  // A receiver with a fixed secret never reads the URL, so the adapters must not make it for every
  // delivery (a pattern test of Host and a string: issue 21's hot path). Counted where the Node
  // adapter reads the path, `originalUrl`, and where the fetch handler reads it, `Request#url`.
  it('the request URL is made only for a `secret` function, through the Node adapter and the fetch handler', async () => {
    let reads = 0;
    const counting =
      (handler: RequestListener): RequestListener =>
      (req, res) => {
        Object.defineProperty(req, 'originalUrl', {
          get: () => {
            reads++;
            return req.url;
          },
        });
        handler(req, res);
      };
    const fixed = createReceiver({ secret: ACME }).onJobCompleted(() => {});
    const looked = createReceiver({
      secret: ({ url }) => tenants[new URL(url!).pathname.split('/')[2] ?? ''],
    }).onJobCompleted(() => {});
    const servers = [
      await listen(createServer(counting(nodeHandler(fixed)))),
      await listen(createServer(counting(nodeHandler(looked)))),
    ];
    closing.push(
      ...servers.map((server) => () => server.close()),
      () => fixed.close(),
      () => looked.close(),
    );

    expect((await post(`${servers[0]!.origin}/webhooks/acme`, ACME)).status).toBe(200);
    expect(reads).toBe(0);
    expect((await post(`${servers[1]!.origin}/webhooks/acme`, ACME)).status).toBe(200);
    expect(reads).toBeGreaterThan(0);

    const delivery = signDelivery({ secret: ACME, payload: completed() });
    const request = new Request('https://my.app/webhooks/acme', {
      method: 'POST',
      headers: delivery.headers,
      body: delivery.body as BodyInit,
    });
    let urlReads = 0;
    const href = request.url;
    Object.defineProperty(request, 'url', {
      get: () => {
        urlReads++;
        return href;
      },
    });
    expect((await fixed.fetch(request)).status).toBe(200);
    expect(urlReads).toBe(0);
  });
});
