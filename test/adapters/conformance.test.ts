// One set of cases, run over real HTTP against every target in targets.ts.
import { gzipSync } from 'node:zlib';
import { signDelivery } from 'jobhook/testing';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { completed, failed, LIMIT, recordingReceiver, SECRET, type RecordingReceiver } from './fixtures.js';
import { postUnfinished, type Running } from './http.js';
import { PATH, targets } from './targets.js';

describe.each(targets)('$name', (target) => {
  let server: Running;
  let rec: RecordingReceiver;
  let url: string;

  beforeEach(async () => {
    rec = recordingReceiver();
    server = await target.start(rec.receiver);
    url = `${server.origin}${PATH}`;
  });
  afterEach(() => server.close());

  const post = (delivery: { headers: Record<string, string>; body: string | Uint8Array }) =>
    fetch(url, { method: 'POST', headers: delivery.headers, body: delivery.body as BodyInit });

  async function answer(response: Response) {
    return {
      status: response.status,
      body: (await response.json()) as { ok: boolean; error?: { code: string; message: string } },
    };
  }

  it('answers 200 to a valid job.completed and runs its handlers with the payload', async () => {
    const payload = completed();
    const { status, body } = await answer(await post(signDelivery({ secret: SECRET, payload })));
    expect({ status, body }).toEqual({ status: 200, body: { ok: true } });
    expect(rec.calls).toEqual([
      { type: 'job.completed', event: payload },
      { type: 'any', event: payload },
    ]);
  });

  it('answers 200 to a valid job.failed and runs its handlers with the payload', async () => {
    const payload = failed();
    const { status } = await answer(await post(signDelivery({ secret: SECRET, payload })));
    expect(status).toBe(200);
    expect(rec.calls).toEqual([
      { type: 'job.failed', event: payload },
      { type: 'any', event: payload },
    ]);
  });

  it('answers 401 to a bad signature and runs nothing', async () => {
    const delivery = signDelivery({ secret: 'another-secret', payload: completed() });
    const { status, body } = await answer(await post(delivery));
    expect(status).toBe(401);
    expect(body.error?.code).toBe('invalid_signature');
    expect(rec.calls).toEqual([]);
  });

  it('answers 401 to an expired timestamp and runs nothing', async () => {
    const timestamp = Math.floor(Date.now() / 1000) - 3600;
    const { status, body } = await answer(
      await post(signDelivery({ secret: SECRET, payload: completed(), timestamp })),
    );
    expect(status).toBe(401);
    expect(body.error?.code).toBe('invalid_signature');
    expect(rec.calls).toEqual([]);
  });

  it('answers 400 to a signed body that is not JSON and runs nothing', async () => {
    const { status, body } = await answer(
      await post(signDelivery({ secret: SECRET, payload: '{"type": "job.' })),
    );
    expect(status).toBe(400);
    expect(body.error?.code).toBe('invalid_json');
    expect(rec.calls).toEqual([]);
  });

  it('verifies a non-UTF-8 body over its bytes and answers 400 invalid_json', async () => {
    // 0xff never occurs in UTF-8: a body decoded to text on the way would no longer verify (401).
    const bytes = Uint8Array.from([
      ...Buffer.from('{"type":"job.completed","x":"'),
      0xff,
      0xfe,
      ...Buffer.from('"}'),
    ]);
    const { status, body } = await answer(await post(signDelivery({ secret: SECRET, payload: bytes })));
    expect(status).toBe(400);
    expect(body.error?.code).toBe('invalid_json');
    expect(rec.calls).toEqual([]);
  });

  it(`answers ${target.postOnly ? "the framework's 404" : '405'} to a GET and runs nothing`, async () => {
    const response = await fetch(url, {
      headers: signDelivery({ secret: SECRET, payload: completed() }).headers,
    });
    if (target.postOnly) {
      expect(response.status).toBe(404);
    } else {
      expect(response.status).toBe(405);
      expect(response.headers.get('allow')).toBe('POST');
    }
    expect(rec.calls).toEqual([]);
  });

  it('answers 413 to a declared Content-Length over the limit and runs nothing', async () => {
    const payload = completed({ padding: 'x'.repeat(LIMIT) });
    const response = await post(signDelivery({ secret: SECRET, payload }));
    const { status, body } = await answer(response);
    expect(status).toBe(413);
    expect(body.error?.code).toBe('payload_too_large');
    expect(rec.calls).toEqual([]);
  });

  it('answers 413 to a declared Content-Length over the limit before reading the body', async () => {
    const { headers } = signDelivery({ secret: SECRET, payload: completed() });
    const declared = { ...headers, 'content-length': String(LIMIT * 1000) };
    const { status, body } = await postUnfinished(url, declared, {
      chunk: Buffer.from('{"id"'),
      endless: false,
    });
    expect(status).toBe(413);
    expect(JSON.parse(body)).toMatchObject({ error: { code: 'payload_too_large' } });
    expect(rec.calls).toEqual([]);
  });

  it('answers 413 to a streamed body as soon as it passes the limit, and runs nothing', async () => {
    const { headers } = signDelivery({ secret: SECRET, payload: completed() });
    const chunk = Buffer.alloc(1024, 'x');
    const { status, body, sent } = await postUnfinished(url, headers, { chunk, endless: true });
    expect(status).toBe(413);
    expect(JSON.parse(body)).toMatchObject({ error: { code: 'payload_too_large' } });
    expect(sent).toBeGreaterThan(LIMIT);
    expect(rec.calls).toEqual([]);
  });

  it('answers 415 to a gzip-encoded body, naming the encoding, and runs nothing', async () => {
    const delivery = signDelivery({ secret: SECRET, payload: completed() });
    const response = await post({
      headers: { ...delivery.headers, 'content-encoding': 'gzip' },
      body: gzipSync(delivery.body),
    });
    const { status, body } = await answer(response);
    expect(status).toBe(415);
    expect(body.error?.code).toBe('unsupported_encoding');
    expect(body.error?.message).toContain('"gzip"');
    expect(rec.calls).toEqual([]);
  });

  it('answers 200 to a body sent with Content-Encoding: identity', async () => {
    const delivery = signDelivery({ secret: SECRET, payload: completed() });
    const response = await post({
      headers: { ...delivery.headers, 'content-encoding': 'identity' },
      body: delivery.body,
    });
    expect(response.status).toBe(200);
    expect(rec.calls).toHaveLength(2);
  });

  it('answers 200 to a duplicate delivery without running handlers again', async () => {
    const delivery = signDelivery({ secret: SECRET, payload: completed() });
    expect((await answer(await post(delivery))).body).toEqual({ ok: true });
    const again = await answer(await post(delivery));
    expect(again).toEqual({ status: 200, body: { ok: true, duplicate: true } });
    expect(rec.calls.filter((call) => call.type === 'job.completed')).toHaveLength(1);
  });

  it('answers 500 when a handler fails, and runs it again on the retry', async () => {
    rec.failNext(1);
    const delivery = signDelivery({ secret: SECRET, payload: completed() });
    const first = await answer(await post(delivery));
    expect(first.status).toBe(500);
    expect(first.body.error?.code).toBe('handler_failed');
    const retry = await answer(await post(delivery));
    expect(retry).toEqual({ status: 200, body: { ok: true } });
    expect(rec.calls.filter((call) => call.type === 'job.completed')).toHaveLength(2);
  });

  it('answers 200 to an unknown event type and runs only onAny handlers', async () => {
    const payload = { id: 'evt_1', type: 'job.started', created_at: '2026-11-21T10:00:00Z', data: { n: 1 } };
    const { status } = await answer(await post(signDelivery({ secret: SECRET, payload })));
    expect(status).toBe(200);
    expect(rec.calls).toEqual([{ type: 'any', event: payload }]);
  });
});
