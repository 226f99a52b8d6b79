import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Webhook as StandardWebhook } from 'standardwebhooks';
import { describe, expect, test } from 'vitest';
import { createReceiver } from 'jobhook';
import { startGateway } from 'jobhook/testing';
import { cleanups, createWebhook, listed, SECRET, sink, start, submit } from './delivery-support.js';
import { call, startSink } from './support.js';

describe('deliveries (6)', () => {
  test('a finished job is delivered signed with the secret_key: the receiver and the standardwebhooks package verify it', async () => {
    const gateway = await start();
    const receiver = createReceiver({ secret: SECRET });
    const endpoint = await sink();
    await createWebhook(gateway, { url: endpoint.url, events: ['job.completed'], secret_key: SECRET });
    const taskId = await submit(gateway);
    const delivery = await endpoint.next();

    const answer = await receiver.receive({ headers: delivery.headers, body: delivery.body });
    expect(answer.status).toBe(200);
    expect(() =>
      new StandardWebhook(SECRET).verify(delivery.body, delivery.headers as Record<string, string>),
    ).not.toThrow();
    const task = (await call(gateway.baseUrl, 'GET', `/api/v1/images/${taskId}`, { apiKey: gateway.apiKey }))
      .json.data;
    expect(JSON.parse(delivery.body)).toEqual({
      id: expect.stringMatching(/^evt_/),
      type: 'job.completed',
      created_at: expect.any(String),
      data: { task_id: taskId, status: 'completed', image_url: task.image_url },
    });
    expect(delivery.headers['content-type']).toBe('application/json');
  });

  test('a plain (non-whsec_) secret_key signs with its UTF-8 bytes', async () => {
    const gateway = await start({ jobs: { stepMs: 1, outcome: () => ({ status: 'failed' }) } });
    const endpoint = await sink();
    await createWebhook(gateway, { url: endpoint.url, events: ['job.failed'], secret_key: 'plain secret' });
    const taskId = await submit(gateway);
    const delivery = await endpoint.next();
    const answer = await createReceiver({ secret: 'plain secret' }).receive({
      headers: delivery.headers,
      body: delivery.body,
    });
    expect(answer.status).toBe(200);
    expect(JSON.parse(delivery.body)).toMatchObject({
      type: 'job.failed',
      data: {
        task_id: taskId,
        status: 'failed',
        error: { code: expect.any(String), message: expect.any(String) },
      },
    });
  });

  test('a webhook without a secret_key gets unsigned deliveries', async () => {
    const gateway = await start();
    const endpoint = await sink();
    await createWebhook(gateway, { url: endpoint.url, events: ['job.completed'] });
    await submit(gateway);
    const delivery = await endpoint.next();
    expect(delivery.headers['webhook-signature']).toBeUndefined();
    expect(delivery.headers['webhook-id']).toMatch(/^msg_/);
    const answer = await createReceiver({ dangerouslySkipVerification: true }).receive({
      headers: delivery.headers,
      body: delivery.body,
    });
    expect(answer.status).toBe(200);
  });

  test("only active webhooks of the job's account that subscribe to the event, respecting api_key_id, receive it", async () => {
    const gateway = await start();
    const endpoint = await sink();
    const second = (
      await call(gateway.baseUrl, 'POST', '/api/v1/keys', { apiKey: gateway.apiKey, body: { title: 'k2' } })
    ).json.data;
    const other = gateway.createAccount();
    const completedOnly = await createWebhook(gateway, {
      url: endpoint.url + '?a',
      events: ['job.completed'],
    });
    await createWebhook(gateway, { url: endpoint.url + '?b', events: ['job.failed'] });
    await createWebhook(gateway, { url: endpoint.url + '?c', events: ['job.completed'] }, other.apiKey);
    await createWebhook(
      gateway,
      { url: endpoint.url + '?d', events: ['job.completed'], api_key_id: second.id },
      second.api_key,
    );
    const forMainKey = await createWebhook(gateway, {
      url: endpoint.url + '?e',
      events: ['job.completed'],
      api_key_id: gateway.apiKeyId,
    });
    const deletedOne = await createWebhook(gateway, { url: endpoint.url + '?f', events: ['job.completed'] });
    await call(gateway.baseUrl, 'DELETE', `/api/v1/webhooks/${deletedOne}`, { apiKey: gateway.apiKey });

    await submit(gateway);
    await gateway.settled();
    expect(gateway.deliveries.map((d) => d.webhookId).sort()).toEqual([completedOnly, forMainKey].sort());
    expect(endpoint.received).toHaveLength(2);
    // One event, two deliveries: the payload id is shared, the webhook-id is per webhook.
    const [a, b] = endpoint.received;
    expect(JSON.parse(a!.body).id).toBe(JSON.parse(b!.body).id);
    expect(a!.headers['webhook-id']).not.toBe(b!.headers['webhook-id']);

    // The second key's job reaches the webhook restricted to it, and the unrestricted one.
    await submit(gateway, second.api_key);
    await gateway.settled();
    expect(gateway.deliveries.slice(2).map((d) => d.webhookId)).toHaveLength(2);
    expect(gateway.deliveries.slice(2).map((d) => d.webhookId)).not.toContain(forMainKey);
  });

  test('a job that ends unknown sends nothing', async () => {
    const gateway = await start({ jobs: { stepMs: 1, outcome: () => ({ status: 'unknown' }) } });
    const endpoint = await sink();
    await createWebhook(gateway, { url: endpoint.url, events: ['job.completed', 'job.failed'] });
    await submit(gateway);
    await gateway.settled();
    expect(endpoint.received).toHaveLength(0);
  });

  test('duplicateRate sends that share of deliveries twice: same webhook-id and body, the copy marked', async () => {
    const gateway = await start({ deliveries: { retryDelaysMs: [1], duplicateRate: 1 } });
    const endpoint = await sink();
    await createWebhook(gateway, { url: endpoint.url, events: ['job.completed'], secret_key: SECRET });
    await submit(gateway);
    await gateway.settled();
    const [first, second] = endpoint.received;
    expect(endpoint.received).toHaveLength(2);
    expect(second!.headers['webhook-id']).toBe(first!.headers['webhook-id']);
    expect(second!.body).toBe(first!.body);
    expect(gateway.deliveries.map((d) => d.duplicate === true).sort()).toEqual([false, true]);
  });
});

describe('retries and counters (6)', () => {
  test('failed attempts are retried with the same webhook-id, each verified; counters count attempts', async () => {
    const gateway = await start();
    const endpoint = await sink((_, index) => (index < 2 ? 500 : 200));
    const receiver = createReceiver({ secret: SECRET, dedupe: false });
    const id = await createWebhook(gateway, {
      url: endpoint.url,
      events: ['job.completed'],
      secret_key: SECRET,
    });
    await submit(gateway);
    await gateway.settled();

    expect(endpoint.received).toHaveLength(3);
    const ids = new Set(endpoint.received.map((r) => r.headers['webhook-id']));
    expect(ids.size).toBe(1);
    for (const attempt of endpoint.received) {
      expect((await receiver.receive({ headers: attempt.headers, body: attempt.body })).status).toBe(200);
    }
    expect(gateway.deliveries.map((d) => [d.attempt, d.ok, d.status])).toEqual([
      [1, false, 500],
      [2, false, 500],
      [3, true, 200],
    ]);
    expect(await listed(gateway, id)).toMatchObject({
      total_sent: 1,
      total_failed: 2,
      last_error: null,
      last_sent_at: expect.any(String),
    });
  });

  test('each attempt is freshly timestamped and signed', async () => {
    // One real wait of just over a second: timestamps are whole seconds.
    const gateway = await start({ deliveries: { retryDelaysMs: [1100] } });
    const endpoint = await sink((_, index) => (index === 0 ? 503 : 200));
    await createWebhook(gateway, { url: endpoint.url, events: ['job.completed'], secret_key: SECRET });
    await submit(gateway);
    const first = await endpoint.next();
    const second = await endpoint.next();
    expect(Number(second.headers['webhook-timestamp'])).toBeGreaterThan(
      Number(first.headers['webhook-timestamp']),
    );
    expect(second.headers['webhook-signature']).not.toBe(first.headers['webhook-signature']);
    expect(second.headers['webhook-id']).toBe(first.headers['webhook-id']);
    expect(second.body).toBe(first.body);
  });

  test('after the last retry the delivery is given up; last_error keeps the reason', async () => {
    const gateway = await start({ deliveries: { retryDelaysMs: [1, 1] } });
    const endpoint = await sink(() => 503);
    const id = await createWebhook(gateway, { url: endpoint.url, events: ['job.completed'] });
    await submit(gateway);
    await gateway.settled();
    expect(endpoint.received).toHaveLength(3);
    expect(await listed(gateway, id)).toMatchObject({
      total_sent: 0,
      total_failed: 3,
      last_error: 'HTTP 503',
    });
  });

  test('a refused connection and a time-out are failed attempts too', async () => {
    const gateway = await start({ deliveries: { retryDelaysMs: [], timeoutMs: 50 } });
    const closed = await startSink();
    await closed.close();
    const silent = createServer(() => undefined); // never answers
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
    cleanups.push(
      () => new Promise((resolve) => (silent.closeAllConnections(), silent.close(() => resolve()))),
    );
    const refused = await createWebhook(gateway, { url: closed.url, events: ['job.completed'] });
    const slow = await createWebhook(gateway, {
      url: `http://127.0.0.1:${(silent.address() as AddressInfo).port}/hook`,
      events: ['job.completed'],
    });
    await submit(gateway);
    await gateway.settled();
    expect(await listed(gateway, refused)).toMatchObject({
      total_failed: 1,
      last_error: expect.stringMatching(/connection failed/),
    });
    expect(await listed(gateway, slow)).toMatchObject({
      total_failed: 1,
      last_error: expect.stringMatching(/timed out/),
    });
  });

  test('why an attempt failed is said in plain words: a name that does not resolve, a port closed', async () => {
    const gateway = await start({ deliveries: { retryDelaysMs: [] } });
    const closed = await startSink();
    await closed.close();
    // .invalid never resolves (RFC 6761): what a placeholder such as https://my.app does from here.
    const unresolved = await createWebhook(gateway, {
      url: 'https://nowhere.invalid/hooks/jobs',
      events: ['job.completed'],
    });
    const refused = await createWebhook(gateway, { url: closed.url, events: ['job.completed'] });
    await submit(gateway);
    await gateway.settled();
    expect((await listed(gateway, unresolved)).last_error).toMatch(
      /^connection failed: could not resolve nowhere\.invalid \((ENOTFOUND|EAI_AGAIN)\): the simulator delivers from this machine; register a URL it can reach, such as http:\/\/127\.0\.0\.1:3000\/hooks\/jobs$/,
    );
    const { host } = new URL(closed.url);
    expect((await listed(gateway, refused)).last_error).toBe(
      `connection failed: nothing accepts connections at ${host} (ECONNREFUSED): is the receiver running, on that port?`,
    );
  });

  test('a webhook deleted between attempts gets no more retries', async () => {
    const gateway = await start({ deliveries: { retryDelaysMs: [300, 300] } });
    const endpoint = await sink(() => 500);
    const id = await createWebhook(gateway, { url: endpoint.url, events: ['job.completed'] });
    await submit(gateway);
    await endpoint.next();
    await call(gateway.baseUrl, 'DELETE', `/api/v1/webhooks/${id}`, { apiKey: gateway.apiKey });
    await gateway.settled();
    expect(endpoint.received).toHaveLength(1);
  });

  test('close() cancels pending retries and resolves', async () => {
    const gateway = await startGateway({ jobs: { stepMs: 1 }, deliveries: { retryDelaysMs: [60_000] } });
    const endpoint = await sink(() => 500);
    await createWebhook(gateway, { url: endpoint.url, events: ['job.completed'] });
    await submit(gateway);
    await endpoint.next();
    await gateway.close();
    await gateway.settled();
    expect(endpoint.received).toHaveLength(1);
  });
});
