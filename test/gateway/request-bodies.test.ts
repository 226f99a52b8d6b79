// The simulator's API reads request bodies with the Node collector, capped at 64 KiB: a larger body,
// declared or streamed, is answered 413 `payload_too_large` in the gateway's envelope (and the
// connection closed, its rest unread), nothing is created, and the simulator serves on.
import { request } from 'node:http';
import { startGateway, type Gateway } from 'jobhook/testing';
import { afterEach, expect, test } from 'vitest';
import { call, type Json } from './support.js';

let gateway: Gateway | undefined;
afterEach(() => gateway?.close());

/** A POST of `size` bytes of JSON, declared or chunked in 8 KiB writes; its status, Connection and envelope. */
function postLarge(url: string, apiKey: string, size: number, declared: boolean) {
  const body = Buffer.from(JSON.stringify({ url: 'https://example.com/in', pad: 'x'.repeat(size) }));
  return new Promise<{ status: number; connection: string | undefined; json: Json }>((resolve, reject) => {
    const req = request(url, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${apiKey}`,
        'content-type': 'application/json',
        ...(declared && { 'content-length': String(body.length) }),
      },
    });
    let answered = false;
    req.on('response', (res) => {
      answered = true;
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => (text += chunk));
      res.on('end', () =>
        resolve({ status: res.statusCode ?? 0, connection: res.headers.connection, json: JSON.parse(text) }),
      );
    });
    req.on('error', (error) => {
      if (!answered) reject(error);
    });
    for (let at = 0; at < body.length; at += 8192) req.write(body.subarray(at, at + 8192));
    req.end();
  });
}

test.each([
  { declared: true, how: 'declared' },
  { declared: false, how: 'chunked' },
])('a $how body over 64 KiB is answered 413 payload_too_large in the envelope', async ({ declared }) => {
  gateway = await startGateway();
  const answer = await postLarge(`${gateway.baseUrl}/api/v1/webhooks`, gateway.apiKey, 200 * 1024, declared);
  expect(answer.status).toBe(413);
  expect(answer.connection).toBe('close');
  expect(answer.json).toMatchObject({
    success: false,
    error: { code: 'payload_too_large', message: 'The body is larger than 65536 bytes.' },
    request_id: expect.stringMatching(/^req_/),
  });
  const list = await call(gateway.baseUrl, 'GET', '/api/v1/webhooks', { apiKey: gateway.apiKey });
  expect(list.json.data).toEqual([]);
  const created = await call(gateway.baseUrl, 'POST', '/api/v1/webhooks', {
    apiKey: gateway.apiKey,
    body: { url: 'https://example.com/in', events: ['job.completed'] },
  });
  expect(created.status).toBe(200);
});
