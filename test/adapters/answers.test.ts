// Every row of the design's answer table, through receive() and through fetch().
import { describe, expect, test, vi } from 'vitest';
import { createReceiver, type Receiver, type ReceiverOptions } from 'jobhook';
import type { ReceiverResponse } from 'jobhook/extend';
import { signDelivery } from 'jobhook/testing';
import { completedPayload, deferred, failedPayload, SECRET } from '../fixtures.js';

interface Sent {
  method?: string;
  headers: Record<string, string>;
  body: string | Uint8Array;
}
type Send = (receiver: Receiver, delivery: Sent) => Promise<ReceiverResponse>;

const viaReceive: Send = (receiver, delivery) => receiver.receive(delivery);
const viaFetch: Send = async (receiver, { method = 'POST', headers, body }) => {
  const request = new Request('http://127.0.0.1/webhooks', {
    method,
    headers,
    body: method === 'GET' || method === 'HEAD' ? null : (body as BodyInit),
  });
  const response = await receiver.fetch(request);
  const responseHeaders: Record<string, string> = {};
  response.headers.forEach((value, name) => (responseHeaders[name] = value));
  return { status: response.status, headers: responseHeaders, body: await response.text() };
};

const quietLogger = () => ({ error: vi.fn(), warn: vi.fn() });
const make = (options: Partial<ReceiverOptions> = {}) =>
  createReceiver({ secret: SECRET, logger: quietLogger(), ...options });
const signed = (payload: unknown, extra: { id?: string; timestamp?: number } = {}): Sent =>
  signDelivery({ secret: SECRET, payload, ...extra });
const errorCode = (response: ReceiverResponse) =>
  (JSON.parse(response.body) as { error?: { code: string } }).error?.code;

describe.each([
  ['receive()', viaReceive],
  ['fetch()', viaFetch],
])('%s', (_name, send) => {
  test('200 for a verified, valid delivery; typed handler gets the payload with unknown fields kept', async () => {
    const receiver = make();
    const seen: unknown[] = [];
    receiver.onJobCompleted((event) => void seen.push(event));
    const payload = completedPayload({ extra_field: { kept: true } });
    const response = await send(receiver, signed(payload));
    expect(response.status).toBe(200);
    expect(response.headers['content-type']).toMatch(/application\/json/);
    expect(JSON.parse(response.body)).toEqual({ ok: true });
    expect(seen).toEqual([payload]);
  });

  test('200 for a valid delivery with no handler for its type', async () => {
    const receiver = make();
    const completed = vi.fn();
    receiver.onJobCompleted(completed);
    expect((await send(receiver, signed(failedPayload()))).status).toBe(200);
    expect(completed).not.toHaveBeenCalled();
  });

  test('200 without running handlers again for a delivery id already handled', async () => {
    const receiver = make();
    const handler = vi.fn();
    receiver.onJobFailed(handler);
    const delivery = signed(failedPayload());
    expect((await send(receiver, delivery)).status).toBe(200);
    const again = await send(receiver, delivery);
    expect(again.status).toBe(200);
    expect(JSON.parse(again.body)).toEqual({ ok: true, duplicate: true });
    expect(handler).toHaveBeenCalledTimes(1);
  });

  test('409 (retryable) for a delivery id being handled right now; handlers not run twice', async () => {
    const receiver = make();
    const gate = deferred();
    const handler = vi.fn(() => gate.promise);
    receiver.onJobCompleted(handler);
    const delivery = signed(completedPayload());
    const first = send(receiver, delivery);
    await vi.waitFor(() => expect(handler).toHaveBeenCalledTimes(1));
    const second = await send(receiver, delivery);
    expect(second.status).toBe(409);
    expect(second.headers['retry-after']).toBeDefined();
    gate.resolve();
    expect((await first).status).toBe(200);
    expect(handler).toHaveBeenCalledTimes(1);
  });

  test.each([
    ['missing signature headers', (d: Sent) => ({ ...d, headers: { 'content-type': 'application/json' } })],
    [
      'a malformed signature header',
      (d: Sent) => ({ ...d, headers: { ...d.headers, 'webhook-signature': 'garbage' } }),
    ],
    [
      'a wrong signature',
      (d: Sent) => ({ ...d, headers: signDelivery({ secret: 'whsec_b3RoZXI=', payload: d.body }).headers }),
    ],
    ['a body changed after signing', (d: Sent) => ({ ...d, body: `${d.body as string} ` })],
  ])('401 for %s, and no handler runs', async (_case, mutate) => {
    const receiver = make();
    const handler = vi.fn();
    receiver.onJobCompleted(handler);
    const delivery = signed(completedPayload());
    const response = await send(receiver, mutate(delivery));
    expect(response.status).toBe(401);
    expect(errorCode(response)).toBe('invalid_signature');
    expect(response.body).not.toContain(delivery.headers['webhook-signature']!.slice(3));
    expect(response.body).not.toContain(SECRET.slice(6));
    expect(handler).not.toHaveBeenCalled();
  });

  test.each([
    ['past', -301],
    ['future', 301],
  ])('401 for a timestamp outside the tolerance (%s), with an injected clock', async (_when, offset) => {
    const now = 1_800_000_000;
    const receiver = make({ now: () => now * 1000 });
    const handler = vi.fn();
    receiver.onAny(handler);
    expect((await send(receiver, signed(completedPayload(), { timestamp: now + offset }))).status).toBe(401);
    expect(
      (await send(receiver, signed(completedPayload(), { timestamp: now - Math.trunc(offset / 2) }))).status,
    ).toBe(200);
    expect(handler).toHaveBeenCalledTimes(1);
  });

  test.each([
    ['not JSON', '{"type": "job.completed",', 'invalid_json'],
    ['not UTF-8', Buffer.from([0x7b, 0x22, 0xff, 0x22, 0x7d]), 'invalid_json'],
    ['a JSON array', '[]', 'invalid_payload'],
    ['an object without a type', '{"id":"evt_1"}', 'invalid_payload'],
    [
      'a job.completed without image_url',
      JSON.stringify({ ...completedPayload(), data: { task_id: 't', status: 'completed' } }),
      'invalid_payload',
    ],
    [
      'a job.failed without its error',
      JSON.stringify({ ...failedPayload(), data: { task_id: 't', status: 'failed' } }),
      'invalid_payload',
    ],
  ])('400 for a verified body that is %s, and no handler runs', async (_case, body, code) => {
    const receiver = make();
    const handler = vi.fn();
    receiver.onAny(handler);
    const response = await send(receiver, signed(body));
    expect(response.status).toBe(400);
    expect(errorCode(response)).toBe(code);
    expect(handler).not.toHaveBeenCalled();
  });

  test('400 names the fields that do not match the schema', async () => {
    const bad = { ...completedPayload(), data: { task_id: 7, status: 'completed', image_url: 'x' } };
    const response = await send(make(), signed(bad));
    expect(JSON.parse(response.body).error.message).toMatch(/data\.task_id/);
  });

  test.each(['GET', 'PUT', 'DELETE'])('405 with Allow: POST for %s', async (method) => {
    const receiver = make();
    const handler = vi.fn();
    receiver.onAny(handler);
    const response = await send(receiver, { ...signed(completedPayload()), method });
    expect(response.status).toBe(405);
    expect(response.headers.allow).toBe('POST');
    expect(handler).not.toHaveBeenCalled();
  });

  test('413 for a body larger than the limit, before the signature is computed', async () => {
    const receiver = make({ maxBodyBytes: 1024 });
    const payload = completedPayload({ padding: 'x'.repeat(2000) });
    // Well-formed headers of another secret: only the body could tell the signature is wrong.
    const response = await send(receiver, signDelivery({ secret: 'another-secret', payload }));
    expect(response.status).toBe(413);
    expect(errorCode(response)).toBe('payload_too_large');
    expect((await send(receiver, signed(completedPayload()))).status).toBe(200);
  });

  test('415 for a body sent with a content coding, before its signature or body is looked at', async () => {
    const receiver = make();
    const handler = vi.fn();
    receiver.onAny(handler);
    for (const encoding of ['gzip', 'br', 'identity, gzip', 'X-Gzip']) {
      const delivery = signed(completedPayload());
      const response = await send(receiver, {
        ...delivery,
        headers: { ...delivery.headers, 'content-encoding': encoding },
      });
      expect(response.status).toBe(415);
      expect(errorCode(response)).toBe('unsupported_encoding');
      expect(JSON.parse(response.body)).toMatchObject({
        error: { message: expect.stringContaining(`"${encoding}"`) },
      });
    }
    // Unsigned: the encoding is refused before the signature headers are.
    const unsigned = await send(receiver, { headers: { 'content-encoding': 'gzip' }, body: '{}' });
    expect(errorCode(unsigned)).toBe('unsupported_encoding');
    for (const encoding of ['identity', 'Identity', ' identity ', '']) {
      const delivery = signed(completedPayload());
      const response = await send(receiver, {
        ...delivery,
        headers: { ...delivery.headers, 'content-encoding': encoding },
      });
      expect(response.status).toBe(200);
    }
    expect(handler).toHaveBeenCalledTimes(4);
  });

  test('415 repeats a Content-Encoding a stranger chose only as printable coding characters, cut short', async () => {
    const receiver = make();
    // Quotes, markup, a tab and a Latin-1 letter (what a Fetch header may hold), then length.
    const hostile = 'gzip", "ok": true, "x": "<script>\t\u00e9' + 'y'.repeat(500);
    const response = await send(receiver, { headers: { 'content-encoding': hostile }, body: '{}' });
    const answer = JSON.parse(response.body) as { ok: boolean; error: { code: string; message: string } };
    expect(Object.keys(answer)).toEqual(['ok', 'error']);
    expect(answer.ok).toBe(false);
    expect(answer.error.message).toContain('"gzip?, ?ok?? true, ?x?? ??script???yyyyy..."');
    expect(answer.error.message.length).toBeLessThan(200);
  });

  test('500 when a handler throws; every error reaches onError; the id is released so a retry runs', async () => {
    const receiver = make();
    let attempts = 0;
    const errors: unknown[] = [];
    receiver.onJobCompleted(() => {
      attempts++;
      if (attempts === 1) throw new Error('database down');
    });
    receiver.onAny(async () => {
      if (attempts === 1) throw new Error('queue down');
    });
    receiver.onError((error) => void errors.push(error));
    const delivery = signed(completedPayload());
    const failed = await send(receiver, delivery);
    expect(failed.status).toBe(500);
    expect(errorCode(failed)).toBe('handler_failed');
    expect(failed.body).not.toMatch(/database down|at .*\.ts/);
    expect(errors).toHaveLength(2);
    expect(errors).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ code: 'handler_failed', deliveryId: delivery.headers['webhook-id'] }),
      ]),
    );
    expect((await send(receiver, delivery)).status).toBe(200);
    expect(attempts).toBe(2);
  });

  test('500 when a handler times out; its signal is aborted, and once it stops a retry runs again', async () => {
    const receiver = make({ handlerTimeoutMs: 20 });
    const signals: AbortSignal[] = [];
    const errors: { code: string }[] = [];
    receiver.onJobFailed((_event, { signal }) => {
      signals.push(signal);
      if (signals.length > 1) return undefined;
      // Stops when told to, as a handler should.
      return new Promise((_, reject) =>
        signal.addEventListener('abort', () => reject(signal.reason as Error)),
      );
    });
    receiver.onError((error) => void errors.push(error));
    const delivery = signed(failedPayload());
    expect((await send(receiver, delivery)).status).toBe(500);
    expect(errors.map((e) => e.code)).toEqual(['handler_timeout']);
    expect(signals[0]!.aborted).toBe(true);
    await vi.waitFor(async () => expect((await send(receiver, delivery)).status).toBe(200));
    expect(signals).toHaveLength(2);
  });

  test('a handler that outlives its timeout keeps the claim: 409 meanwhile, then done when it succeeds', async () => {
    const receiver = make({ handlerTimeoutMs: 20 });
    const gate = deferred();
    let runs = 0;
    receiver.onJobFailed(() => {
      runs++;
      return gate.promise; // ignores its signal
    });
    const delivery = signed(failedPayload());
    expect((await send(receiver, delivery)).status).toBe(500);
    expect((await send(receiver, delivery)).status).toBe(409);
    gate.resolve();
    await vi.waitFor(async () => {
      const again = await send(receiver, delivery);
      expect(JSON.parse(again.body)).toEqual({ ok: true, duplicate: true });
    });
    expect(runs).toBe(1);
  });

  test('a handler that outlives its timeout and then fails releases the claim: the retry runs it', async () => {
    const receiver = make({ handlerTimeoutMs: 20 });
    const errors: string[] = [];
    receiver.onError((error) => void errors.push(error.code));
    const gate = deferred();
    let runs = 0;
    receiver.onJobFailed(() =>
      ++runs === 1 ? gate.promise.then(() => Promise.reject(new Error('late'))) : undefined,
    );
    const delivery = signed(failedPayload());
    expect((await send(receiver, delivery)).status).toBe(500);
    expect((await send(receiver, delivery)).status).toBe(409);
    gate.resolve();
    await vi.waitFor(async () => expect((await send(receiver, delivery)).status).toBe(200));
    expect(runs).toBe(2);
    expect(errors).toEqual(['handler_timeout', 'handler_failed']);
  });

  test('200 for an unknown event type, which reaches onAny handlers only', async () => {
    const receiver = make();
    const any = vi.fn();
    const completed = vi.fn();
    receiver.onAny(any).onJobCompleted(completed);
    const payload = { id: 'evt_x', type: 'job.started', created_at: 'now', data: { anything: 1 } };
    expect((await send(receiver, signed(payload))).status).toBe(200);
    expect(any).toHaveBeenCalledWith(payload, expect.objectContaining({ type: 'job.started' }));
    expect(completed).not.toHaveBeenCalled();
  });

  test.each(['constructor', 'toString', '__proto__', 'hasOwnProperty'])(
    'a verified event whose type is the Object prototype key %s is an unknown type: 200, onAny only',
    async (type) => {
      const receiver = make();
      const any = vi.fn();
      receiver.onAny(any);
      const response = await send(receiver, signed(`{"id":"evt_p","type":${JSON.stringify(type)}}`));
      expect(response.status).toBe(200);
      expect(any).toHaveBeenCalledTimes(1);
    },
  );

  test('503 after close(), which waits for running handlers', async () => {
    const receiver = make();
    const gate = deferred();
    let started = false;
    let finished = false;
    receiver.onJobCompleted(async () => {
      started = true;
      await gate.promise;
      finished = true;
    });
    const running = send(receiver, signed(completedPayload()));
    await vi.waitFor(() => expect(started).toBe(true));
    const closed = receiver.close();
    const refused = await send(receiver, signed(completedPayload()));
    expect(refused.status).toBe(503);
    gate.resolve();
    await closed;
    expect(finished).toBe(true);
    expect((await running).status).toBe(200);
  });
});

describe('receive() only', () => {
  test.each([
    ['undefined', undefined],
    ['a parsed object', { type: 'job.completed' }],
  ])(
    '500 when the body is %s (consumed by a body parser); the fix logged once, not sent',
    async (_case, body) => {
      const logger = quietLogger();
      const receiver = make({ logger });
      const handler = vi.fn();
      receiver.onAny(handler);
      const delivery = signed(completedPayload());
      const input = { headers: delivery.headers, body: body as never };
      const response = await receiver.receive(input);
      await receiver.receive(input);
      expect(response.status).toBe(500);
      expect(errorCode(response)).toBe('body_unavailable');
      expect(JSON.parse(response.body).error.message).not.toMatch(/NestFactory|receive\(\)/);
      expect(logger.error).toHaveBeenCalledTimes(1);
      // No adapter named its framework: the fix for a body given to receive() by hand.
      expect(logger.error).toHaveBeenCalledWith(
        expect.stringMatching(/by a body parser before .*give receiver\.receive\(\) the body as it arrived/),
      );
      expect(handler).not.toHaveBeenCalled();
    },
  );

  test('accepts a Fetch Headers object, headers in any case, and array values', async () => {
    const receiver = make();
    const handler = vi.fn();
    receiver.onJobCompleted(handler);
    const delivery = signed(completedPayload());
    expect(
      (await receiver.receive({ headers: new Headers(delivery.headers), body: delivery.body })).status,
    ).toBe(200);
    const shouted = signed(completedPayload());
    const upper = Object.fromEntries(Object.entries(shouted.headers).map(([k, v]) => [k.toUpperCase(), [v]]));
    expect((await receiver.receive({ headers: upper, body: Buffer.from(shouted.body) })).status).toBe(200);
    expect(handler).toHaveBeenCalledTimes(2);
  });

  test('a verifier that throws is a 401, not a 500', async () => {
    const receiver = make({
      verifier: () => {
        throw new Error('cannot parse t=,v1=');
      },
    });
    expect((await receiver.receive(signed(completedPayload()))).status).toBe(401);
  });

  test("a custom verifier's detail is logged, never answered: it might quote a signature", async () => {
    const logger = quietLogger();
    const receiver = make({
      logger,
      verifier: () => ({ ok: false, code: 'no_match', detail: 'expected v1,c2VjcmV0LXNpZ25hdHVyZQ==' }),
    });
    const response = await receiver.receive(signed(completedPayload()));
    expect(response.status).toBe(401);
    expect(response.body).not.toContain('c2VjcmV0LXNpZ25hdHVyZQ');
    expect(JSON.parse(response.body).error.message).toBe('No signature matches; check the secret.');
    expect(logger.warn).toHaveBeenCalledWith(expect.stringContaining('c2VjcmV0LXNpZ25hdHVyZQ'));
  });

  test('every verifier is answered from one table of refusal codes; an unknown code is no_match', async () => {
    const answerOf = async (outcome: unknown) => {
      const receiver = make({ verifier: () => outcome as never });
      return JSON.parse((await receiver.receive(signed(completedPayload()))).body).error.message;
    };
    expect(await answerOf({ ok: false, code: 'stale_timestamp' })).toMatch(/outside the allowed tolerance/);
    expect(await answerOf({ ok: false, code: 'missing_header' })).toBe('A signature header is missing.');
    expect(await answerOf({ ok: false, code: 'malformed_header' })).toBe('A signature header is malformed.');
    expect(await answerOf({ ok: false, code: 'toString' })).toBe('No signature matches; check the secret.');
    expect(await answerOf({ ok: false, reason: 'free text' })).toBe(
      'No signature matches; check the secret.',
    );
    expect(await answerOf(false)).toBe('No signature matches; check the secret.');
  });

  test("jobhook's own schemes name the header in the log, and answer with the fixed text", async () => {
    const logger = quietLogger();
    const response = await make({ logger }).receive({ headers: {}, body: '{}' });
    expect(JSON.parse(response.body).error.message).toBe('A signature header is missing.');
    expect(logger.warn).toHaveBeenCalledWith(
      expect.stringMatching(/missing_header.*Missing header: webhook-id/),
    );
  });

  test('a custom verifier function receives the secrets and may answer with a boolean', async () => {
    const seen: string[][] = [];
    const receiver = make({
      secret: ['a', 'b'],
      verifier: ({ secrets, headers }) => {
        seen.push([...secrets]);
        return headers.get('x-token') === 'letmein';
      },
    });
    const body = JSON.stringify(completedPayload());
    expect((await receiver.receive({ headers: { 'x-token': 'letmein' }, body })).status).toBe(200);
    expect((await receiver.receive({ headers: { 'x-token': 'nope' }, body })).status).toBe(401);
    expect(seen[0]).toEqual(['a', 'b']);
  });

  test('without dedupe, the payload id is not remembered', async () => {
    const receiver = make({ dedupe: false });
    const handler = vi.fn();
    receiver.onJobCompleted(handler);
    const delivery = signed(completedPayload());
    await receiver.receive(delivery);
    await receiver.receive(delivery);
    expect(handler).toHaveBeenCalledTimes(2);
  });

  test('a dedupe store that fails answers 500 (retryable), never 2xx', async () => {
    const logger = quietLogger();
    const receiver = make({
      logger,
      dedupe: {
        leaseMs: 30_000,
        renew: () => true,
        claim: () => Promise.reject(new Error('redis unavailable')),
        complete: () => undefined,
        release: () => undefined,
      },
    });
    receiver.onJobCompleted(() => undefined);
    const response = await receiver.receive(signed(completedPayload()));
    expect(response.status).toBe(500);
    expect(errorCode(response)).toBe('internal_error');
    expect(logger.error).toHaveBeenCalledWith(expect.stringContaining('redis unavailable'));
  });
});
