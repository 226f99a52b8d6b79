// Mountings behind a body parser that ran first (targets.ts, parserFirstTargets), over real HTTP.
// A parser that kept the raw bytes changes nothing. One that kept only the text it decoded may
// have changed them (a byte-order mark stripped, another charset, a chunked body of unknown
// length): the receiver verifies that text only when it is provably the bytes that arrived, and
// otherwise answers 500 body_unavailable and logs the fix, so the sender retries. Never a 401 for a
// delivery that every other mounting accepts: a delivery refused forever is a lost event.
import { request } from 'node:http';
import { signDelivery } from 'jobhook/testing';
import { afterEach, describe, expect, it } from 'vitest';
import { completed, recordingReceiver, SECRET, type RecordingReceiver } from './fixtures.js';
import type { Running } from './http.js';
import { PATH, parserFirstTargets, type ParserFirstTarget } from './targets.js';

interface Answer {
  status: number;
  body: { ok: boolean; error?: { code: string; message: string } };
}

const running: Running[] = [];
afterEach(async () => {
  for (const server of running.splice(0)) await server.close();
});

/** A fresh recording receiver mounted on `target`, and the webhook's URL. */
async function mount(target: ParserFirstTarget) {
  const rec = recordingReceiver();
  const server = await target.start(rec.receiver);
  running.push(server);
  return { rec, url: `${server.origin}${PATH}` };
}

type Delivery = { headers: Record<string, string>; body: string | Uint8Array };

async function post(url: string, delivery: Delivery): Promise<Answer> {
  const response = await fetch(url, {
    method: 'POST',
    headers: delivery.headers,
    body: delivery.body as BodyInit,
  });
  return { status: response.status, body: (await response.json()) as Answer['body'] };
}

/** The same delivery sent chunked, with no content-length. */
function postChunked(url: string, delivery: Delivery) {
  return new Promise<Answer>((resolve, reject) => {
    const req = request(url, { method: 'POST', headers: delivery.headers });
    req.on('response', (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => (text += chunk));
      res.on('end', () => resolve({ status: res.statusCode!, body: JSON.parse(text) as Answer['body'] }));
    });
    req.on('error', reject);
    const bytes = Buffer.from(delivery.body);
    req.write(bytes.subarray(0, 10));
    req.end(bytes.subarray(10));
  });
}

describe.each(parserFirstTargets)('$name', (target) => {
  /** What a delivery the parser may have altered must get: 200 with the bytes, else a 500 to retry. */
  function expectUnalteredOrRetried(answer: Answer, rec: RecordingReceiver) {
    if (target.keepsBytes) {
      expect(answer).toEqual({ status: 200, body: { ok: true } });
      expect(rec.calls.map((call) => call.type)).toEqual(['job.completed', 'any']);
    } else {
      expect(answer.status).toBe(500);
      expect(answer.body.error?.code).toBe('body_unavailable');
      expect(answer.body.error?.message).not.toContain('koaHandler'); // the fix is the app's, in its log
      expect(rec.errors.join('\n')).toContain('in Koa before');
      expect(rec.errors.join('\n')).toContain('koaHandler before bodyParser()');
      expect(rec.calls).toEqual([]);
    }
  }

  it('answers 200 to a valid delivery and 401 to a forged one', async () => {
    const { rec, url } = await mount(target);
    const payload = completed();
    expect(await post(url, signDelivery({ secret: SECRET, payload }))).toEqual({
      status: 200,
      body: { ok: true },
    });
    expect(rec.calls[0]).toEqual({ type: 'job.completed', event: payload });
    const forged = await post(url, signDelivery({ secret: 'another-secret', payload: completed() }));
    expect(forged.status).toBe(401);
  });

  it('a delivery that starts with a byte-order mark: 200, or 500 to retry, never 401', async () => {
    const { rec, url } = await mount(target);
    const bytes = Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from(JSON.stringify(completed()))]);
    expectUnalteredOrRetried(await post(url, signDelivery({ secret: SECRET, payload: bytes })), rec);
  });

  it('a chunked delivery, whose length the text cannot be checked against: 200, or 500 to retry', async () => {
    const { rec, url } = await mount(target);
    expectUnalteredOrRetried(
      await postChunked(url, signDelivery({ secret: SECRET, payload: completed() })),
      rec,
    );
  });
});
