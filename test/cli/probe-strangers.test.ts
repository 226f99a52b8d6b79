// The probe's listener is reachable by anyone who finds its URL: what it keeps is bounded, and it
// learns only from deliveries that carry the submitted task's id as an exact value, arriving after
// the submission (a POST carrying the id before it is not taken); a task id from the gateway that
// could not identify a delivery (empty, "null", under 4 or over 200 characters, with spaces or
// control characters) is refused rather than matching everything. Its bounds: probe-bounds.test.ts.
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createClient, type GatewayClient } from 'jobhook/client';
import { startGateway, type GatewayOptions } from 'jobhook/testing';
import { afterEach, describe, expect, it } from 'vitest';
import { startListener } from '../../src/tools/probe/listener.js';
import { runProbe } from '../../src/tools/probe/probe.js';

const closers: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const close of closers.splice(0).reverse()) await close();
});

async function simulator(options: GatewayOptions = {}) {
  const gateway = await startGateway({ jobs: { stepMs: 1 }, deliveries: { retryDelaysMs: [] }, ...options });
  closers.push(() => gateway.close());
  const client = createClient({ baseUrl: gateway.baseUrl, apiKey: gateway.apiKey });
  return { gateway, client };
}

/** `client` whose submissions go through `after` (given the real answer and the listener's URL) first. */
function submittingThrough(
  client: GatewayClient,
  listenerUrl: () => string,
  after: (taskId: string, url: string) => Promise<string>,
): GatewayClient {
  const images = Object.create(client.images) as GatewayClient['images'];
  images.generate = async (...args: Parameters<GatewayClient['images']['generate']>) => {
    const submitted = await client.images.generate(...args);
    return { ...submitted, task_id: await after(submitted.task_id, listenerUrl()) };
  };
  return Object.assign(Object.create(client) as GatewayClient, { images });
}

const post = (url: string, body: string) =>
  fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body });

describe("the probe's listener holds a bounded amount", () => {
  it('keeps at most 200 deliveries, and refuses a body over 256 KiB with 413', async () => {
    const listener = await startListener({ host: '127.0.0.1', port: 0, answer: () => 200 });
    closers.push(() => listener.close());
    for (let i = 0; i < 210; i++) await post(listener.url, `{"n":${i}}`);
    expect(listener.deliveries).toHaveLength(200);
    expect((await post(listener.url, 'x'.repeat(256 * 1024 + 1))).status).toBe(413);
  });

  it('keeps only what `keep` takes, and prune() drops what no longer matches', async () => {
    const listener = await startListener({
      host: '127.0.0.1',
      port: 0,
      answer: () => 200,
      keep: (delivery) => Buffer.from(delivery.body).toString().includes('wanted'),
    });
    closers.push(() => listener.close());
    expect((await post(listener.url, '{"a":"stranger"}')).status).toBe(200);
    await post(listener.url, '{"a":"wanted 1"}');
    await post(listener.url, '{"a":"wanted 2"}');
    expect(listener.deliveries).toHaveLength(2);
    listener.prune((delivery) => Buffer.from(delivery.body).toString().includes('2'));
    expect(listener.deliveries.map((delivery) => Buffer.from(delivery.body).toString())).toEqual([
      '{"a":"wanted 2"}',
    ]);
  });
});

describe('the probe learns only from its own task', () => {
  it('a gateway that answers with an empty task id: refused, naming it, and the webhook deleted', async () => {
    const { gateway, client } = await simulator();
    let url = '';
    const probing = runProbe({
      client: submittingThrough(
        client,
        () => url,
        async () => '',
      ),
      baseUrl: gateway.baseUrl,
      timeoutMs: 5000,
      progress: (line) => (url = /^Listening at (\S+);/.exec(line)?.[1] ?? url),
    });
    await expect(probing).rejects.toMatchObject({
      name: 'ProbeError',
      message: expect.stringMatching(/task id "", which cannot identify a delivery/),
      webhookDeleted: true,
    });
    expect(await client.webhooks.list()).toEqual([]);
  });

  for (const [what, taskId] of [
    ['"null"', 'null'],
    ['"1"', '1'],
    ['201 characters long', `task_${'a'.repeat(196)}`],
    ['with a space', 'task 123'],
    ['with a control character', 'task_\u0007123'],
    ['with a line break', 'task_123\n'],
  ] as const) {
    it(`a gateway that answers with a task id ${what}: refused, naming it, and the webhook deleted`, async () => {
      const { gateway, client } = await simulator();
      const probing = runProbe({
        client: submittingThrough(
          client,
          () => '',
          async () => taskId,
        ),
        baseUrl: gateway.baseUrl,
        timeoutMs: 5000,
      });
      await expect(probing).rejects.toMatchObject({
        name: 'ProbeError',
        message: expect.stringContaining(
          `task id ${JSON.stringify(taskId.slice(0, 40))}, which cannot identify a delivery (a printable id of 4 to 200 characters was expected)`,
        ),
        webhookDeleted: true,
      });
      expect(await client.webhooks.list()).toEqual([]);
    });
  }

  it('a POST carrying the task id that came before the submission is not taken for the delivery', async () => {
    const { gateway, client } = await simulator({ jobs: { auto: false } });
    // The task the probe will be answered with exists already: a stranger could know its id.
    const { task_id: taskId } = await client.images.generate({ model: 'm', prompt: 'a fox' });
    let url = '';
    const forged = JSON.stringify({
      type: 'job.completed',
      id: 'evt_forged',
      created_at: new Date().toISOString(),
      data: { task_id: taskId, status: 'completed', image_url: 'https://attacker.test/x.png' },
    });
    // Before the probe registers its second webhook, and so before it submits, the stranger posts.
    const webhooks = Object.create(client.webhooks) as GatewayClient['webhooks'];
    let created = 0;
    webhooks.create = async (...args: Parameters<GatewayClient['webhooks']['create']>) => {
      if (++created === 2) expect((await post(url, forged)).status).toBe(200);
      return client.webhooks.create(...args);
    };
    const submitting = submittingThrough(
      client,
      () => url,
      async () => {
        gateway.advanceJob(taskId);
        gateway.advanceJob(taskId);
        return taskId;
      },
    );
    const report = await runProbe({
      client: Object.assign(submitting, { webhooks }),
      baseUrl: gateway.baseUrl,
      timeoutMs: 5000,
      progress: (line) => (url = /^Listening at (\S+);/.exec(line)?.[1] ?? url),
    });
    expect(created).toBe(2);
    expect(report.probe.taskId).toBe(taskId);
    expect(report.signature.scheme).toBe('standard-webhooks');
    expect(report.check).toMatchObject({ completed: 'handled', forgedRefused: true });
    expect(report.payload.sample).toMatchObject({
      data: { image_url: expect.not.stringContaining('attacker') },
    });
    expect(report.retries.attempts).toBe(1);
  });

  it("a stranger's POST that carries the task id inside a longer value is not taken for the delivery", async () => {
    const { gateway, client } = await simulator({ jobs: { auto: false } });
    let url = '';
    const forged = (taskId: string) =>
      JSON.stringify({
        type: 'job.completed',
        id: 'evt_forged',
        created_at: new Date().toISOString(),
        data: { task_id: `${taskId}-forged`, status: 'completed', image_url: 'https://attacker.test/x.png' },
      });
    const report = await runProbe({
      client: submittingThrough(
        client,
        () => url,
        async (taskId) => {
          expect((await post(url, forged(taskId))).status).toBe(200);
          // The job runs only now: the forged POST came first.
          gateway.advanceJob(taskId);
          gateway.advanceJob(taskId);
          return taskId;
        },
      ),
      baseUrl: gateway.baseUrl,
      timeoutMs: 5000,
      progress: (line) => (url = /^Listening at (\S+);/.exec(line)?.[1] ?? url),
    });
    expect(report.signature.scheme).toBe('standard-webhooks');
    expect(report.check).toMatchObject({ completed: 'handled', forgedRefused: true });
    expect(report.retries.attempts).toBe(1);
  });
});

it('warns when a payload path is read from a header the signature does not cover', async () => {
  const { gateway, client } = await simulator({ signing: 'standard-webhooks', payload: 'type-in-header' });
  const report = await runProbe({ client, baseUrl: gateway.baseUrl, timeoutMs: 5000 });
  expect(report.payload.typePath).toBe('header:x-event-type');
  expect(report.notes.join(' ')).toMatch(
    /typePath is read from the header x-event-type, which the signature does not cover/,
  );
});

it('a gateway that batches (a JSON array of events in one POST): no contract, the probe fails saying so', async () => {
  const { gateway, client } = await simulator();
  let listenerUrl = '';
  // Between the gateway and the probe: each delivery goes on as a batch of one.
  const batching = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const headers = Object.fromEntries(
        Object.entries(req.headers).filter(
          ([name]) => !['host', 'content-length', 'connection'].includes(name),
        ),
      ) as Record<string, string>;
      void fetch(listenerUrl, {
        method: 'POST',
        headers,
        body: `[${Buffer.concat(chunks).toString()}]`,
      }).then(
        async (answer) => res.writeHead(answer.status).end(await answer.text()),
        () => res.writeHead(502).end(),
      );
    });
  });
  await new Promise<void>((resolve) => batching.listen(0, '127.0.0.1', resolve));
  closers.push(() => new Promise((resolve) => batching.close(resolve)));
  const probing = runProbe({
    client,
    baseUrl: gateway.baseUrl,
    timeoutMs: 5000,
    publicUrl: `http://127.0.0.1:${(batching.address() as AddressInfo).port}/`,
    progress: (line) => (listenerUrl = /^Listening at (\S+);/.exec(line)?.[1] ?? listenerUrl),
  });
  await expect(probing).rejects.toMatchObject({
    name: 'ProbeError',
    message: expect.stringMatching(/batches its deliveries .*no contract can be adopted/),
    webhookDeleted: true,
  });
});

it('an unsigned gateway that sends a UUID delivery id: reported unsigned, not unknown', async () => {
  const { gateway, client } = await simulator({
    signing: { family: 'unsigned', idHeader: 'x-request-uuid' } as never,
  });
  const report = await runProbe({ client, baseUrl: gateway.baseUrl, timeoutMs: 5000 });
  expect(report.signature.scheme).toBe('unsigned');
});
