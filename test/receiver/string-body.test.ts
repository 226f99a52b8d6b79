// A body handed over as a string (AWS Lambda and most serverless platforms) is hashed as that
// string and parsed as it is; its UTF-8 bytes are made only when something reads them. What
// verifiers see, the size limit and the signature must be exactly what the bytes would give.
import { createHmac } from 'node:crypto';
import { Webhook } from 'standardwebhooks';
import { describe, expect, it } from 'vitest';
import { createReceiver, hmacSha256 } from 'jobhook';
import type { SignedRequest } from 'jobhook/extend';
import { completedPayload, SECRET } from '../fixtures.js';

/** A job.completed body with characters of 2, 3 and 4 UTF-8 bytes, as a string. */
function multibyteBody(): string {
  return JSON.stringify(completedPayload({ note: 'é€🙂'.repeat(20) }));
}

function standardHeaders(body: string, id = 'msg_string_body') {
  const timestamp = new Date();
  return {
    'webhook-id': id,
    'webhook-timestamp': String(Math.floor(timestamp.getTime() / 1000)),
    'webhook-signature': new Webhook(SECRET).sign(id, timestamp, body),
  };
}

/** A receiver whose custom verifier accepts every delivery, keeping what it was given. */
function acceptingEverything() {
  const seen: SignedRequest[] = [];
  const receiver = createReceiver({
    secret: SECRET,
    verifier: (request) => {
      seen.push(request);
      return true;
    },
  });
  return { receiver, seen };
}

describe('receive() given the body as a string', () => {
  it('verifies a multibyte string signed by the standardwebhooks package, and parses it', async () => {
    const body = multibyteBody();
    const seen: unknown[] = [];
    const receiver = createReceiver({ secret: SECRET }).onJobCompleted((event) => void seen.push(event));
    const answer = await receiver.receive({ headers: standardHeaders(body), body });
    expect(answer.status).toBe(200);
    expect(seen).toEqual([JSON.parse(body)]);
  });

  it('refuses a string whose signature covers other bytes', async () => {
    const body = multibyteBody();
    const receiver = createReceiver({ secret: SECRET });
    const answer = await receiver.receive({ headers: standardHeaders(body), body: body.replace('🙂', '🙃') });
    expect(answer.status).toBe(401);
  });

  it('verifies with hmacSha256 over the string as over its UTF-8', async () => {
    const body = multibyteBody();
    const key = 'plain-secret';
    const signature = createHmac('sha256', key).update(Buffer.from(body, 'utf8')).digest('hex');
    const receiver = createReceiver({ secret: key, verifier: hmacSha256({ header: 'x-signature' }) });
    expect((await receiver.receive({ headers: { 'x-signature': signature }, body })).status).toBe(200);
  });

  it('gives a custom verifier the string as `text` and its UTF-8 as `body`', async () => {
    const body = multibyteBody();
    const { receiver, seen } = acceptingEverything();
    await receiver.receive({ headers: {}, body });
    await receiver.receive({ headers: {}, body: Buffer.from(body) });
    expect(seen.map((request) => request.text)).toEqual([body, undefined]);
    expect(seen.map((request) => Buffer.from(request.body).toString('utf8'))).toEqual([body, body]);
  });

  it('gives a verifier object the same, `body` read through the request', async () => {
    const body = multibyteBody();
    const bodies: string[] = [];
    const receiver = createReceiver({
      secret: SECRET,
      verifier: {
        name: 'reads-body',
        prepare: () => (request) => {
          bodies.push(Buffer.from(request.body).toString('utf8'), String(request.text));
          return { ok: true };
        },
      },
    });
    expect((await receiver.receive({ headers: {}, body })).status).toBe(200);
    expect(bodies).toEqual([body, body]);
  });

  it('gives no `text` for a string with a lone surrogate: `body` is its UTF-8, U+FFFD for it', async () => {
    const body = JSON.stringify(completedPayload({ id: 'evt_X' })).replace('evt_X', 'evt_\ud800');
    const ids: string[] = [];
    const { receiver, seen } = acceptingEverything();
    receiver.onJobCompleted((event) => void ids.push(event.id));
    expect((await receiver.receive({ headers: {}, body })).status).toBe(200);
    expect(seen[0]!.text).toBeUndefined();
    expect(Buffer.from(seen[0]!.body)).toEqual(Buffer.from(new TextEncoder().encode(body)));
    expect(ids).toEqual(['evt_\ufffd']);
  });

  describe('the size limit counts UTF-8 bytes, not string length', () => {
    const body = multibyteBody();
    const bytes = Buffer.byteLength(body, 'utf8');
    const receive = (maxBodyBytes: number) =>
      createReceiver({ secret: SECRET, maxBodyBytes }).receive({ headers: standardHeaders(body), body });

    it('accepts a string of exactly the limit in bytes (longer than a third of it in units)', async () => {
      expect(body.length * 3).toBeGreaterThan(bytes);
      expect((await receive(bytes)).status).toBe(200);
    });

    it('refuses one byte over, though the string is shorter than the limit', async () => {
      expect(body.length).toBeLessThan(bytes - 1);
      expect((await receive(bytes - 1)).status).toBe(413);
    });

    it('refuses a string longer than the limit', async () => {
      expect((await receive(body.length - 1)).status).toBe(413);
    });
  });
});
