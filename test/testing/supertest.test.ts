// README's supertest line, as written, for every payload form signDelivery accepts: an object, a
// string and bytes (a Uint8Array or a Buffer). supertest sends a Uint8Array that is not a Buffer as
// JSON ({"0":123,…}), and a Buffer too under a JSON content type.
import express from 'express';
import { createReceiver } from 'jobhook';
import { expressHandler } from 'jobhook/express';
import { signDelivery } from 'jobhook/testing';
import request from 'supertest';
import { describe, expect, it } from 'vitest';
import { completed, SECRET } from '../adapters/fixtures.js';

describe('request(app).post(…).set(delivery.headers).send(delivery.body)', () => {
  const payload = completed();
  const json = JSON.stringify(payload);
  it.each([
    { form: 'an object', given: payload },
    { form: 'a string', given: json },
    { form: 'a Uint8Array', given: new TextEncoder().encode(json) },
    { form: 'a Buffer', given: Buffer.from(json) },
  ])('delivers a payload given as $form', async ({ given }) => {
    const seen: unknown[] = [];
    const receiver = createReceiver({ secret: SECRET }).onJobCompleted((event) => void seen.push(event));
    const app = express();
    app.post('/webhooks', expressHandler(receiver));

    const delivery = signDelivery({ secret: SECRET, payload: given });
    const response = await request(app).post('/webhooks').set(delivery.headers).send(delivery.body);

    expect({ status: response.status, body: response.body as unknown }).toEqual({
      status: 200,
      body: { ok: true },
    });
    expect(seen).toEqual([payload]);
  });

  it('sends bytes that are not UTF-8 unchanged: verified, then refused as not JSON', async () => {
    const receiver = createReceiver({ secret: SECRET });
    const app = express().post('/webhooks', expressHandler(receiver));
    const bytes = Buffer.from([
      ...Buffer.from('{"type":"job.completed","x":"'),
      0xff,
      0xfe,
      ...Buffer.from('"}'),
    ]);

    const delivery = signDelivery({ secret: SECRET, payload: bytes });
    const response = await request(app).post('/webhooks').set(delivery.headers).send(delivery.body);

    expect(response.status).toBe(400); // 401 if a byte had changed on the way
    expect((response.body as { error: { code: string } }).error.code).toBe('invalid_json');
  });
});
