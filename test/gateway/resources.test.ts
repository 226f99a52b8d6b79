import { afterEach, describe, expect, test } from 'vitest';
import { startGateway, type Gateway, type GatewayOptions } from 'jobhook/testing';
import { call, type Json } from './support.js';

let gateway: Gateway;
async function start(options?: GatewayOptions) {
  gateway = await startGateway(options);
  return gateway;
}
afterEach(() => gateway.close());

const post = (path: string, body: unknown, apiKey = gateway.apiKey) =>
  call(gateway.baseUrl, 'POST', path, { apiKey, body });
const get = (path: string, apiKey = gateway.apiKey) => call(gateway.baseUrl, 'GET', path, { apiKey });

describe('webhooks (4.2 to 4.4, 2.3)', () => {
  test('creation answers id, url, events, status active, api_key_id, created_at, updated_at and nothing else', async () => {
    await start();
    const { status, json } = await post('/api/v1/webhooks', {
      url: 'https://example.com/hook',
      events: ['job.completed', 'job.failed'],
      secret_key: 'shh-a-secret',
    });
    expect(status).toBe(200);
    expect(json.data).toEqual({
      id: expect.any(Number),
      url: 'https://example.com/hook',
      events: ['job.completed', 'job.failed'],
      status: 'active',
      api_key_id: null,
      created_at: expect.any(String),
      updated_at: expect.any(String),
    });
  });

  test('the list carries every field including the counters and last_error; create does not', async () => {
    await start();
    const created = await post('/api/v1/webhooks', { url: 'https://example.com/a', events: ['job.failed'] });
    for (const field of ['total_sent', 'total_failed', 'last_sent_at', 'last_error']) {
      expect(created.json.data).not.toHaveProperty(field);
    }
    const { json } = await get('/api/v1/webhooks');
    expect(json.data).toEqual([
      {
        ...created.json.data,
        total_sent: 0,
        total_failed: 0,
        last_sent_at: null,
        last_error: null,
      },
    ]);
  });

  test('secret_key is accepted but appears in no answer', async () => {
    await start();
    const secret = 'whsec_c2VjcmV0LWJ5dGVzLWZvci10ZXN0';
    const created = await post('/api/v1/webhooks', {
      url: 'https://example.com/a',
      events: ['job.completed'],
      secret_key: secret,
    });
    expect(created.status).toBe(200);
    expect(gateway.webhook(created.json.data.id)?.secret_key).toBe(secret);
    const listed = await get('/api/v1/webhooks');
    for (const answer of [created, listed]) {
      expect(JSON.stringify(answer.json)).not.toContain(secret);
      expect(JSON.stringify(answer.json)).not.toContain('secret_key');
    }
  });

  test.each([
    ['https to any host', 'https://hooks.example.com/in'],
    ['http to 127.0.0.1', 'http://127.0.0.1:8080/in'],
    ['http to localhost', 'http://localhost:3000/in'],
    ['http to [::1]', 'http://[::1]:3000/in'],
  ])('accepts a url: %s', async (_, url) => {
    await start();
    expect((await post('/api/v1/webhooks', { url, events: ['job.completed'] })).status).toBe(200);
  });

  test.each([
    ['plain http to a public host', { url: 'http://example.com/in', events: ['job.completed'] }],
    ['not a URL', { url: 'not a url', events: ['job.completed'] }],
    ['another scheme', { url: 'ftp://example.com/in', events: ['job.completed'] }],
    ['credentials in the URL', { url: 'https://user:pw@example.com/in', events: ['job.completed'] }],
    ['no url', { events: ['job.completed'] }],
    ['no events', { url: 'https://example.com/in' }],
    ['empty events', { url: 'https://example.com/in', events: [] }],
    ['an unknown event', { url: 'https://example.com/in', events: ['job.started'] }],
    ['a repeated event', { url: 'https://example.com/in', events: ['job.failed', 'job.failed'] }],
    ['events not an array', { url: 'https://example.com/in', events: 'job.failed' }],
    ['an empty secret_key', { url: 'https://example.com/in', events: ['job.failed'], secret_key: '' }],
    [
      'a whsec_ secret that is not base64',
      { url: 'https://example.com/in', events: ['job.failed'], secret_key: 'whsec_!!' },
    ],
  ])('refuses with 400 invalid_request: %s', async (_, body) => {
    await start();
    const { status, json } = await post('/api/v1/webhooks', body);
    expect(status).toBe(400);
    expect(json.error.code).toBe('invalid_request');
    expect((await get('/api/v1/webhooks')).json.data).toEqual([]);
  });

  test('api_key_id must be the id of the key that authenticates the request (5.6)', async () => {
    await start();
    const ok = await post('/api/v1/webhooks', {
      url: 'https://example.com/a',
      events: ['job.completed'],
      api_key_id: gateway.apiKeyId,
    });
    expect(ok.status).toBe(200);
    expect(ok.json.data.api_key_id).toBe(gateway.apiKeyId);
    const other = await post('/api/v1/keys', { title: 'second' });
    const mismatch = await post('/api/v1/webhooks', {
      url: 'https://example.com/a',
      events: ['job.completed'],
      api_key_id: other.json.data.id,
    });
    expect(mismatch.status).toBe(400);
    expect(mismatch.json.error.code).toBe('invalid_request');
  });

  test('lists and deletions apply to the authenticated account only (5.7)', async () => {
    await start();
    const mine = await post('/api/v1/webhooks', {
      url: 'https://example.com/mine',
      events: ['job.completed'],
    });
    const other = gateway.createAccount();
    const theirs = await post(
      '/api/v1/webhooks',
      { url: 'https://example.com/theirs', events: ['job.completed'] },
      other.apiKey,
    );
    expect((await get('/api/v1/webhooks')).json.data.map((w: Json) => w.id)).toEqual([mine.json.data.id]);
    expect((await get('/api/v1/webhooks', other.apiKey)).json.data.map((w: Json) => w.id)).toEqual([
      theirs.json.data.id,
    ]);
    const crossDelete = await call(gateway.baseUrl, 'DELETE', `/api/v1/webhooks/${theirs.json.data.id}`, {
      apiKey: gateway.apiKey,
    });
    expect(crossDelete.status).toBe(404);
    expect((await get('/api/v1/webhooks', other.apiKey)).json.data).toHaveLength(1);
  });

  test('delete answers the deleted id; the webhook is gone; a second delete is 404 not_found', async () => {
    await start();
    const created = await post('/api/v1/webhooks', {
      url: 'https://example.com/a',
      events: ['job.completed'],
    });
    const id = created.json.data.id;
    const deleted = await call(gateway.baseUrl, 'DELETE', `/api/v1/webhooks/${id}`, {
      apiKey: gateway.apiKey,
    });
    expect(deleted.status).toBe(200);
    expect(deleted.json.data).toEqual({ id });
    expect((await get('/api/v1/webhooks')).json.data).toEqual([]);
    const again = await call(gateway.baseUrl, 'DELETE', `/api/v1/webhooks/${id}`, { apiKey: gateway.apiKey });
    expect(again.status).toBe(404);
    expect(again.json.error).toEqual({
      code: 'not_found',
      message: expect.stringMatching(/webhook not found/i),
    });
    const notNumeric = await call(gateway.baseUrl, 'DELETE', '/api/v1/webhooks/abc', {
      apiKey: gateway.apiKey,
    });
    expect(notNumeric.status).toBe(404);
  });
});

describe('image tasks (4.5, 4.6, 2.4, 3)', () => {
  test('submission charges credits and reports credits_used and remaining_credits; balances agree', async () => {
    await start({ credits: 100, creditsPerImage: 7, jobs: { auto: false } });
    const first = await post('/api/v1/images/generate', {
      model: 'm1',
      prompt: 'a cat',
      aspect_ratio: '16:9',
    });
    expect(first.status).toBe(200);
    expect(first.json.data).toEqual({ task_id: expect.any(String), credits_used: 7, remaining_credits: 93 });
    const second = await post('/api/v1/images/generate', {
      model: 'm1',
      prompt: 'a dog',
      aspect_ratio: '1:1',
    });
    expect(second.json.data.remaining_credits).toBe(86);
    const balances = await get('/api/v1/account/balances');
    expect(balances.json.data).toEqual({ total_credits: 100, used_credits: 14, remaining_credits: 86 });
  });

  test('a task moves pending -> processing -> completed, with image_url only once completed', async () => {
    await start({ jobs: { auto: false } });
    const { task_id } = (
      await post('/api/v1/images/generate', { model: 'm', prompt: 'p', aspect_ratio: '3:2' })
    ).json.data;
    const pending = (await get(`/api/v1/images/${task_id}`)).json.data;
    expect(pending).toMatchObject({ task_id, status: 'pending' });
    expect(pending).not.toHaveProperty('image_url');
    gateway.advanceJob(task_id);
    const processing = (await get(`/api/v1/images/${task_id}`)).json.data;
    expect(processing).toMatchObject({ task_id, status: 'processing' });
    expect(processing).not.toHaveProperty('image_url');
    gateway.advanceJob(task_id, { status: 'completed', image_url: 'https://cdn.example/x.png' });
    const completed = (await get(`/api/v1/images/${task_id}`)).json.data;
    expect(completed).toMatchObject({ task_id, status: 'completed', image_url: 'https://cdn.example/x.png' });
  });

  test('a task can end failed (with an error) or unknown, as the test decides', async () => {
    await start({ jobs: { auto: false } });
    const failed = (await post('/api/v1/images/generate', { model: 'm', prompt: 'p' })).json.data.task_id;
    gateway.advanceJob(failed);
    gateway.advanceJob(failed, { status: 'failed', error: { code: 'nsfw', message: 'refused' } });
    expect((await get(`/api/v1/images/${failed}`)).json.data).toMatchObject({
      status: 'failed',
      error: { code: 'nsfw', message: 'refused' },
    });
    const unknown = (await post('/api/v1/images/generate', { model: 'm', prompt: 'p' })).json.data.task_id;
    gateway.advanceJob(unknown);
    gateway.advanceJob(unknown, { status: 'unknown' });
    const answer = (await get(`/api/v1/images/${unknown}`)).json.data;
    expect(answer.status).toBe('unknown');
    expect(answer).not.toHaveProperty('image_url');
  });

  test('automatic jobs end as the outcome function says, and every status is one of section 3', async () => {
    await start({
      jobs: {
        stepMs: 1,
        outcome: ({ prompt }) => (prompt === 'fail' ? { status: 'failed' } : { status: 'completed' }),
      },
    });
    const ok = (await post('/api/v1/images/generate', { model: 'm', prompt: 'ok' })).json.data.task_id;
    const bad = (await post('/api/v1/images/generate', { model: 'm', prompt: 'fail' })).json.data.task_id;
    await gateway.settled();
    expect((await get(`/api/v1/images/${ok}`)).json.data).toMatchObject({
      status: 'completed',
      image_url: expect.any(String),
    });
    expect((await get(`/api/v1/images/${bad}`)).json.data).toMatchObject({ status: 'failed' });
  });

  test('by default, as in the CLI, jobs whose prompt contains "fail" fail and the others complete', async () => {
    await start({ jobs: { stepMs: 1 } });
    const ok = (await post('/api/v1/images/generate', { model: 'm', prompt: 'a fox' })).json.data.task_id;
    const bad = (await post('/api/v1/images/generate', { model: 'm', prompt: 'please fail' })).json.data
      .task_id;
    await gateway.settled();
    expect((await get(`/api/v1/images/${ok}`)).json.data.status).toBe('completed');
    expect((await get(`/api/v1/images/${bad}`)).json.data).toMatchObject({
      status: 'failed',
      error: { code: 'generation_failed', message: 'The prompt asked to fail.' },
    });
  });

  test('a test may step an automatic job by hand without breaking it', async () => {
    await start({ jobs: { stepMs: 20 } });
    const { task_id } = (await post('/api/v1/images/generate', { model: 'm', prompt: 'p' })).json.data;
    gateway.advanceJob(task_id);
    gateway.advanceJob(task_id, { status: 'failed' });
    await gateway.settled();
    expect((await get(`/api/v1/images/${task_id}`)).json.data.status).toBe('failed');
  });

  test("an unknown task id, or another account's task, is 404 not_found", async () => {
    await start({ jobs: { auto: false } });
    expect((await get('/api/v1/images/task_nope')).json.error.code).toBe('not_found');
    const { task_id } = (await post('/api/v1/images/generate', { model: 'm', prompt: 'p' })).json.data;
    const other = gateway.createAccount();
    const { status, json } = await get(`/api/v1/images/${task_id}`, other.apiKey);
    expect(status).toBe(404);
    expect(json.error.code).toBe('not_found');
  });

  test.each([
    ['no model', { prompt: 'p' }],
    ['an empty prompt', { model: 'm', prompt: '' }],
    ['an aspect_ratio not <width>:<height>', { model: 'm', prompt: 'p', aspect_ratio: 'wide' }],
    ['a zero ratio', { model: 'm', prompt: 'p', aspect_ratio: '0:1' }],
    ['a model outside the configured list', { model: 'other', prompt: 'p' }],
  ])('refuses a submission with 400 invalid_request: %s', async (_, body) => {
    await start({ models: ['m'] });
    const { status, json } = await post('/api/v1/images/generate', body);
    expect(status).toBe(400);
    expect(json.error.code).toBe('invalid_request');
    expect((await get('/api/v1/account/balances')).json.data.used_credits).toBe(0);
  });

  test('past the concurrent-jobs limit a submission gets 429, and is accepted again once a job ends', async () => {
    await start({ maxConcurrentJobs: 1, jobs: { auto: false } });
    const first = (await post('/api/v1/images/generate', { model: 'm', prompt: 'p' })).json.data.task_id;
    const limited = await post('/api/v1/images/generate', { model: 'm', prompt: 'p' });
    expect(limited.status).toBe(429);
    expect(limited.json).toMatchObject({ success: false, error: { code: 'too_many_concurrent_jobs' } });
    gateway.advanceJob(first);
    gateway.advanceJob(first);
    expect((await post('/api/v1/images/generate', { model: 'm', prompt: 'p' })).status).toBe(200);
  });

  test('a submission beyond the remaining credits is refused with 402 and charges nothing', async () => {
    await start({ credits: 15, creditsPerImage: 10, jobs: { auto: false } });
    expect((await post('/api/v1/images/generate', { model: 'm', prompt: 'p' })).status).toBe(200);
    const refused = await post('/api/v1/images/generate', { model: 'm', prompt: 'p' });
    expect(refused.status).toBe(402);
    expect(refused.json.error.code).toBe('insufficient_credits');
    expect((await get('/api/v1/account/balances')).json.data.remaining_credits).toBe(5);
  });
});
