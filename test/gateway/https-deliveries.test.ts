// Issue 26.1: the whole loop over TLS. Receivers on node:https (nodeHandler, and Express) with a
// certificate made at test time; the simulator trusts its CA through deliveries.ca.
import { once } from 'node:events';
import { createServer, type Server, type ServerOptions } from 'node:https';
import type { RequestListener } from 'node:http';
import type { AddressInfo } from 'node:net';
import express from 'express';
import { beforeAll, describe, expect, test } from 'vitest';
import { createReceiver } from 'jobhook';
import { expressHandler } from 'jobhook/express';
import { nodeHandler } from 'jobhook/node';
import { cleanups, createWebhook, listed, SECRET, start, submit } from './delivery-support.js';
import { makeCertificates, type TestCertificates } from './tls-support.js';

let certificates: TestCertificates;
let otherCa: TestCertificates;
beforeAll(async () => {
  [certificates, otherCa] = await Promise.all([makeCertificates(), makeCertificates('another CA')]);
}, 60_000);

/** A receiver that counts its handler runs per task, served over HTTPS at `<url>`. */
async function httpsReceiver(mount: 'node' | 'express', tls: ServerOptions) {
  const handled: string[] = [];
  const receiver = createReceiver({ secret: SECRET }).onJobCompleted((event) => {
    handled.push(event.data.task_id);
  });
  const listener: RequestListener =
    mount === 'node'
      ? nodeHandler(receiver, { path: '/webhooks' })
      : express().post('/webhooks', expressHandler(receiver));
  const server: Server = createServer(tls, listener).listen(0, '127.0.0.1');
  await once(server, 'listening');
  cleanups.push(
    () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  );
  return { url: `https://127.0.0.1:${(server.address() as AddressInfo).port}/webhooks`, handled };
}

describe('HTTPS deliveries', () => {
  test.each(['node', 'express'] as const)(
    'to a %s receiver on node:https whose CA the simulator trusts: signature verified, handled once, counters right',
    async (mount) => {
      const gateway = await start({ deliveries: { ca: certificates.ca, retryDelaysMs: [] } });
      const receiver = await httpsReceiver(mount, { key: certificates.key, cert: certificates.cert });
      const id = await createWebhook(gateway, {
        url: receiver.url,
        events: ['job.completed'],
        secret_key: SECRET,
      });
      const tasks = [await submit(gateway), await submit(gateway)];
      await gateway.settled();

      expect(receiver.handled.sort()).toEqual([...tasks].sort());
      expect(gateway.deliveries.map((d) => [d.ok, d.status])).toEqual([
        [true, 200],
        [true, 200],
      ]);
      expect(await listed(gateway, id)).toMatchObject({ total_sent: 2, total_failed: 0, last_error: null });
    },
  );

  test('a receiver whose certificate is not trusted: a failed attempt with a clear last_error, and no handler run', async () => {
    // Trusts another CA only, then no extra CA at all: both refuse the receiver's certificate.
    for (const ca of [otherCa.ca, undefined]) {
      const gateway = await start({ deliveries: { retryDelaysMs: [], ...(ca && { ca }) } });
      const receiver = await httpsReceiver('node', { key: certificates.key, cert: certificates.cert });
      const id = await createWebhook(gateway, {
        url: receiver.url,
        events: ['job.completed'],
        secret_key: SECRET,
      });
      await submit(gateway);
      await gateway.settled();
      expect(receiver.handled).toEqual([]);
      const webhook = await listed(gateway, id);
      expect(webhook).toMatchObject({ total_sent: 0, total_failed: 1 });
      expect(webhook.last_error).toBe(
        "connection failed: TLS: the receiver's certificate is not trusted (UNABLE_TO_VERIFY_LEAF_SIGNATURE); a test CA goes in deliveries.ca",
      );
    }
  });

  test('deliveries.ca that is not PEM is refused with invalid_options', async () => {
    await expect(start({ deliveries: { ca: 'not a certificate' } })).rejects.toMatchObject({
      code: 'invalid_options',
      message: expect.stringContaining('deliveries.ca'),
    });
  });
});
