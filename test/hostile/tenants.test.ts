// Tenants on one receiver are strangers to each other. Tenant B signs correctly with its own
// secret on its own route, and tries to touch tenant A's events: its event ids, its task ids, its
// waits; a prober tries to tell a tenant that exists from one that does not. Over HTTP, two
// tenants on one route (`/webhooks/:tenant`), the secrets picked by a `secret` function.
import { createServer } from 'node:http';
import { createReceiver, memoryJobTracker, type Receiver, type ReceiverOptions } from 'jobhook';
import { createClient } from 'jobhook/client';
import { nodeHandler } from 'jobhook/node';
import { signDelivery, startGateway, type Gateway } from 'jobhook/testing';
import { afterEach, describe, expect, it } from 'vitest';
import { completedPayload } from '../fixtures.js';
import { listen, type Running } from '../adapters/http.js';

// Secrets of their own: each tenant needs one, and the test of the key cache needs plain text.
const secretOf = (name: string) =>
  `whsec_${Buffer.from(`tenant-${name}-secret-0123456789abcdef`).toString('base64')}`;
const A = secretOf('a');
const B = secretOf('b');

const closing: (() => unknown)[] = [];
afterEach(async () => {
  for (const close of closing.splice(0).reverse()) await close();
});

interface Run {
  route: string;
  taskId: string;
  imageUrl: string | undefined;
  tenant: string | undefined;
}

/** One receiver on `/webhooks/:tenant`, the secrets (or `{ tenant, secret }`) picked by `lookup`. */
async function serve(
  lookup: (tenant: string) => unknown,
  options: Partial<ReceiverOptions> = {},
): Promise<{ server: Running; receiver: Receiver; runs: Run[]; logged: string[] }> {
  const runs: Run[] = [];
  const logged: string[] = [];
  const receiver = createReceiver({
    secret: ({ url }) => lookup(new URL(url!).pathname.split('/')[2] ?? '') as string,
    logger: { error: (line) => logged.push(line), warn: (line) => logged.push(line) },
    ...options,
  }).onJobCompleted((event, context) => {
    runs.push({
      route: event.id,
      taskId: event.data.task_id,
      imageUrl: event.data.image_url,
      tenant: (context as { tenant?: string }).tenant,
    });
  });
  const server = await listen(createServer(nodeHandler(receiver)));
  closing.push(
    () => server.close(),
    () => receiver.close(),
  );
  return { server, receiver, runs, logged };
}

async function post(url: string, secret: string, payload: object) {
  const delivery = signDelivery({ secret, payload });
  const response = await fetch(url, {
    method: 'POST',
    headers: delivery.headers,
    body: delivery.body as BodyInit,
  });
  return { status: response.status, body: await response.text() };
}

const bareSecrets: Record<string, string> = { a: A, b: B };

describe('tenants on one receiver', () => {
  it("B's event with A's event id does not make A's genuine delivery a duplicate", async () => {
    const { server, runs } = await serve((tenant) => bareSecrets[tenant]);
    const forged = completedPayload({ id: 'evt_shared' });
    forged.data = { ...forged.data, task_id: 'task_b' };
    expect((await post(`${server.origin}/webhooks/b`, B, forged)).status).toBe(200);
    const genuine = completedPayload({ id: 'evt_shared' });
    genuine.data = { ...genuine.data, task_id: 'task_a' };
    const answer = await post(`${server.origin}/webhooks/a`, A, genuine);
    expect(answer.status).toBe(200);
    expect(answer.body).not.toContain('duplicate');
    expect(runs.map((run) => run.taskId)).toEqual(['task_b', 'task_a']);
    // A redelivery within one tenant is still a duplicate.
    expect((await post(`${server.origin}/webhooks/a`, A, genuine)).body).toContain('duplicate');
    expect(runs).toHaveLength(2);
  });

  it('a rotation inside one tenant still dedupes: the event signed with either secret runs once', async () => {
    const NEXT = secretOf('a-next');
    const { server, runs } = await serve((tenant) => (tenant === 'a' ? [NEXT, A] : undefined));
    const event = completedPayload({ id: 'evt_rotated' });
    expect((await post(`${server.origin}/webhooks/a`, A, event)).status).toBe(200);
    expect((await post(`${server.origin}/webhooks/a`, NEXT, event)).body).toContain('duplicate');
    expect(runs).toHaveLength(1);
  });

  it('handlers learn the tenant the function named, and an explicit tenant keeps one identity across a rotation', async () => {
    const NEXT = secretOf('a-next');
    let secrets: string[] = [A];
    const { server, runs } = await serve((tenant) =>
      tenant === 'a' ? { tenant: 'acme', secret: secrets } : undefined,
    );
    const event = completedPayload({ id: 'evt_across_rotation' });
    expect((await post(`${server.origin}/webhooks/a`, A, event)).status).toBe(200);
    secrets = [NEXT, A]; // the rotation starts: the same tenant, another list of secrets
    expect((await post(`${server.origin}/webhooks/a`, NEXT, event)).body).toContain('duplicate');
    expect(runs).toHaveLength(1);
    expect(runs[0]!.tenant).toBe('acme');
  });

  it("B's event with A's task id leaves A's task tracked, and A's own outcome is still handled", async () => {
    const gateway: Gateway = await startGateway();
    closing.push(() => gateway.close());
    const jobs = memoryJobTracker();
    const client = createClient({ baseUrl: gateway.baseUrl, apiKey: gateway.apiKey, jobs, tenant: 'a' });
    const { task_id: taskId } = await client.images.generate({
      model: 'm',
      prompt: 'p',
      aspect_ratio: '1:1',
    });
    const { server, runs } = await serve(
      (tenant) => (bareSecrets[tenant] ? { tenant, secret: bareSecrets[tenant] } : undefined),
      {
        reconcile: { client, jobs, afterMs: 0, intervalMs: 0 },
      },
    );
    const forged = completedPayload({ id: 'evt_forged' });
    forged.data = { ...forged.data, task_id: taskId, image_url: 'https://evil.example/b.png' };
    expect((await post(`${server.origin}/webhooks/b`, B, forged)).status).toBe(200);
    const tracked = jobs.pending();
    expect(tracked.map((job) => job.taskId)).toEqual([taskId]);
    // A's genuine outcome, under A's key: not a duplicate of B's.
    const genuine = completedPayload({ id: 'evt_genuine' });
    genuine.data = { ...genuine.data, task_id: taskId, image_url: 'https://img.example/a.png' };
    expect((await post(`${server.origin}/webhooks/a`, A, genuine)).body).not.toContain('duplicate');
    expect(runs.map((run) => [run.tenant, run.imageUrl])).toEqual([
      ['b', 'https://evil.example/b.png'],
      ['a', 'https://img.example/a.png'],
    ]);
    expect(jobs.pending()).toEqual([]);
  });

  it("B's event with A's task id does not drop a task tracked by a client that names no tenant", async () => {
    const jobs = memoryJobTracker();
    jobs.track('task_of_a');
    const gateway: Gateway = await startGateway();
    closing.push(() => gateway.close());
    const client = createClient({ baseUrl: gateway.baseUrl, apiKey: gateway.apiKey });
    const { server } = await serve((tenant) => bareSecrets[tenant], {
      reconcile: { client, jobs, afterMs: 60_000, intervalMs: 0 },
    });
    const forged = completedPayload({ id: 'evt_forged_untracked' });
    forged.data = { ...forged.data, task_id: 'task_of_a' };
    expect((await post(`${server.origin}/webhooks/b`, B, forged)).status).toBe(200);
    expect(jobs.pending().map((job) => job.taskId)).toEqual(['task_of_a']);
  });

  it("B's event with A's task id never resolves A's wait with an image B chose", async () => {
    const gateway: Gateway = await startGateway();
    closing.push(() => gateway.close());
    const client = createClient({ baseUrl: gateway.baseUrl, apiKey: gateway.apiKey });
    const { server, receiver } = await serve((tenant) => bareSecrets[tenant]);
    const { task_id: taskId } = await client.images.generate({
      model: 'm',
      prompt: 'p',
      aspect_ratio: '1:1',
    });
    const forged = completedPayload({ id: 'evt_forged_wait' });
    forged.data = { ...forged.data, task_id: taskId, image_url: 'https://evil.example/b.png' };
    expect((await post(`${server.origin}/webhooks/b`, B, forged)).status).toBe(200);
    // A wait that names no tenant takes no tenant's webhook result on this receiver: it polls.
    const done = await client.images.waitFor(taskId, { receiver, pollIntervalMs: 50 });
    expect(done.image_url).not.toBe('https://evil.example/b.png');
    expect(done.image_url).toBe(((await client.images.get(taskId)) as { image_url: string }).image_url);
  });

  it("a wait that names its tenant is woken by that tenant's delivery, never by another's", async () => {
    const gateway: Gateway = await startGateway();
    closing.push(() => gateway.close());
    const client = createClient({ baseUrl: gateway.baseUrl, apiKey: gateway.apiKey });
    const { server, receiver } = await serve((tenant) =>
      bareSecrets[tenant] ? { tenant, secret: bareSecrets[tenant] } : undefined,
    );
    const { task_id: taskId } = await client.images.generate({
      model: 'm',
      prompt: 'p',
      aspect_ratio: '1:1',
    });
    const waiting = client.images.waitFor(taskId, { receiver, tenant: 'a', pollIntervalMs: 60_000 });
    const forged = completedPayload({ id: 'evt_b' });
    forged.data = { ...forged.data, task_id: taskId, image_url: 'https://evil.example/b.png' };
    expect((await post(`${server.origin}/webhooks/b`, B, forged)).status).toBe(200);
    const genuine = completedPayload({ id: 'evt_a' });
    genuine.data = { ...genuine.data, task_id: taskId, image_url: 'https://img.example/a.png' };
    expect((await post(`${server.origin}/webhooks/a`, A, genuine)).status).toBe(200);
    expect((await waiting).image_url).toBe('https://img.example/a.png');
  });
});

describe('a prober cannot tell a tenant that exists from one that does not', () => {
  const unsigned = { 'content-type': 'application/json' };

  it('an unsigned, a malformed and a stale delivery get the same answer on a known and an unknown tenant', async () => {
    const { server } = await serve((tenant) => bareSecrets[tenant]);
    const stale = signDelivery({
      secret: A,
      payload: completedPayload(),
      timestamp: Math.floor(Date.now() / 1000) - 3600,
    });
    const attempts: Record<string, string>[] = [
      unsigned,
      { ...unsigned, 'webhook-id': 'msg_1', 'webhook-timestamp': 'soon', 'webhook-signature': 'v1,abc' },
      stale.headers,
    ];
    for (const headers of attempts) {
      const answers = [];
      for (const tenant of ['a', 'nobody']) {
        const response = await fetch(`${server.origin}/webhooks/${tenant}`, {
          method: 'POST',
          headers,
          body: '{}',
        });
        answers.push({ status: response.status, body: await response.text() });
      }
      expect(answers[1]).toEqual(answers[0]);
    }
  });

  it('a slow body is answered the same on a known and an unknown tenant', async () => {
    const { server } = await serve((tenant) => bareSecrets[tenant], { bodyTimeoutMs: 200 });
    const answers = [];
    for (const tenant of ['a', 'nobody']) {
      // Signed headers that pass every check that needs no body, then a body that never ends.
      const delivery = signDelivery({ secret: secretOf('stranger'), payload: completedPayload() });
      const body = new ReadableStream<Uint8Array>({
        start(controller) {
          controller.enqueue(new TextEncoder().encode('{"id":'));
        },
      });
      const response = await fetch(`${server.origin}/webhooks/${tenant}`, {
        method: 'POST',
        headers: delivery.headers,
        body,
        duplex: 'half',
      } as RequestInit);
      answers.push({ status: response.status, body: await response.text() });
    }
    expect(answers[0]!.status).toBe(408);
    expect(answers[1]).toEqual(answers[0]);
  });
});

describe('secrets of many tenants', () => {
  it('the rotation [k1, k2] and the single secret "k1\\nk2" never share prepared keys', async () => {
    // Plain-text secrets on purpose: the two lists must differ only by how they would be joined.
    const lists: Record<string, string | string[]> = {
      rotating: ['first-secret-key-1', 'second-secret-key-2'],
      joined: 'first-secret-key-1\nsecond-secret-key-2',
    };
    const { server } = await serve((tenant) => lists[tenant]);
    expect(
      (await post(`${server.origin}/webhooks/rotating`, 'first-secret-key-1', completedPayload())).status,
    ).toBe(200);
    expect(
      (await post(`${server.origin}/webhooks/joined`, 'first-secret-key-1', completedPayload())).status,
    ).toBe(401);
    const own = await post(
      `${server.origin}/webhooks/joined`,
      'first-secret-key-1\nsecond-secret-key-2',
      completedPayload(),
    );
    expect(own.status).toBe(200);
  });

  it('10,000 tenants each refused once: every refusal logged, no secret in any line', async () => {
    // Each refusal passes the header checks and the lookup (so the tenant's secret joins the
    // redaction), then fails on the signature. The test's bound ends a hang and times nothing: a
    // busy machine took over a minute for what an idle one does in seconds.
    const tenants = 10_000;
    const logged: string[] = [];
    const receiver = createReceiver({
      secret: ({ url }) => secretOf(new URL(url!).pathname.split('/')[2]!),
      logger: { error: (line) => logged.push(line), warn: (line) => logged.push(line) },
    });
    closing.push(() => receiver.close());
    const stranger = secretOf('stranger');
    for (let n = 0; n < tenants; n++) {
      const delivery = signDelivery({ secret: stranger, payload: completedPayload({ id: `evt_${n}` }) });
      const answer = await receiver.receive({
        headers: delivery.headers,
        body: delivery.body,
        url: `https://receiver.example/webhooks/t${n}`,
      });
      expect(answer.status).toBe(401);
    }
    expect(logged.some((line) => line.includes('401'))).toBe(true);
    const all = logged.join('\n');
    for (const n of [0, 42, tenants - 1]) expect(all).not.toContain(secretOf(`t${n}`));
  }, 600_000);
});
