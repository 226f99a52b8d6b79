// README's NestJS recipe: NestFactory.create(AppModule, { rawBody: true }) and a controller that
// hands `req.rawBody` to the receiver. The repository compiles without experimentalDecorators, so
// the decorators are applied as the calls TypeScript would emit for the README's syntax.
import 'reflect-metadata';
import type { AddressInfo } from 'node:net';
import {
  Controller,
  Module,
  Post,
  Req,
  Res,
  type INestApplication,
  type RawBodyRequest,
} from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import type { Request, Response } from 'express';
import { signDelivery } from 'jobhook/testing';
import { afterEach, describe, expect, it } from 'vitest';
import { completed, recordingReceiver, SECRET, type JsonAnswer } from '../adapters/fixtures.js';

describe('NestJS (platform-express)', () => {
  let app: INestApplication | undefined;
  afterEach(() => app?.close());

  async function start(options: { rawBody: boolean }) {
    const rec = recordingReceiver();
    class WebhooksController {
      // As in README.md: @Post('webhooks') async webhooks(@Req() req, @Res() res) { … }
      async webhooks(req: RawBodyRequest<Request>, res: Response) {
        const answer = await rec.receiver.receive({
          method: req.method,
          headers: req.headers,
          body: req.rawBody,
        });
        res.status(answer.status).set(answer.headers).send(answer.body);
      }
      // Another route, whose JSON Nest's global parser still parses.
      echo(req: Request) {
        return { route: (req.body as { route: string }).route };
      }
    }
    const proto = WebhooksController.prototype;
    Controller()(WebhooksController);
    Post('webhooks')(proto, 'webhooks', Object.getOwnPropertyDescriptor(proto, 'webhooks')!);
    Req()(proto, 'webhooks', 0);
    Res()(proto, 'webhooks', 1);
    Post('echo')(proto, 'echo', Object.getOwnPropertyDescriptor(proto, 'echo')!);
    Req()(proto, 'echo', 0);
    class AppModule {}
    Module({ controllers: [WebhooksController] })(AppModule);

    app = await NestFactory.create(AppModule, { rawBody: options.rawBody, logger: false });
    await app.listen(0, '127.0.0.1');
    const { port } = app.getHttpServer().address() as AddressInfo;
    const post = async (path: string, body: string | Uint8Array, headers: Record<string, string>) => {
      const response = await fetch(`http://127.0.0.1:${port}${path}`, {
        method: 'POST',
        headers,
        body: body as BodyInit,
      });
      return { status: response.status, body: (await response.json()) as JsonAnswer };
    };
    return { rec, post };
  }

  it('verifies req.rawBody with { rawBody: true }, while other routes get parsed JSON', async () => {
    const { rec, post } = await start({ rawBody: true });
    const payload = completed();
    const delivery = signDelivery({ secret: SECRET, payload });
    expect(await post('/webhooks', delivery.body, delivery.headers)).toEqual({
      status: 200,
      body: { ok: true },
    });
    expect(rec.calls[0]).toEqual({ type: 'job.completed', event: payload });
    const forged = signDelivery({ secret: 'another-secret', payload: completed() });
    expect((await post('/webhooks', forged.body, forged.headers)).status).toBe(401);
    const echo = await post('/echo', '{"route":"echo"}', { 'content-type': 'application/json' });
    expect(echo.body).toEqual({ route: 'echo' });
  });

  it('answers 500 body_unavailable without { rawBody: true }: the option is the fix', async () => {
    const { rec, post } = await start({ rawBody: false });
    const delivery = signDelivery({ secret: SECRET, payload: completed() });
    const { status, body } = await post('/webhooks', delivery.body, delivery.headers);
    expect(status).toBe(500);
    expect(body.error?.code).toBe('body_unavailable');
    expect(body.error?.message).not.toMatch(/rawBody/); // the fix goes to the log, not the sender
    expect(rec.errors.join('\n')).toMatch(/NestFactory\.create\(AppModule, \{ rawBody: true \}\)/);
    expect(rec.calls).toEqual([]);
  });
});
