// The signature alarm tells the truth: a receiver that registered its webhook asks the gateway,
// whose counters grow only for its own refused deliveries. The gateway's refused deliveries (a
// wrong secret, another signing family) raise it at error, confirmed; a stranger's forgeries raise
// it at warn, unconfirmed, and page no one.
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createReceiver, type ReceiverObserver } from 'jobhook';
import type { SignatureAlarm } from 'jobhook/extend';
import { createClient } from 'jobhook/client';
import { nodeHandler } from 'jobhook/node';
import { signDelivery, startGateway, type GatewayOptions } from 'jobhook/testing';
import { afterEach, describe, expect, it } from 'vitest';
import { completedPayload, SECRET } from '../fixtures.js';

const OTHER_SECRET = `whsec_${Buffer.from('another-secret-entirely-0123456789').toString('base64')}`;

const closers: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const close of closers.splice(0).reverse()) await close();
});

/** A receiver with SECRET on a real server, registered with the simulator (with `registerSecret`). */
async function registered(gatewayOptions: GatewayOptions, registerSecret?: string) {
  const gateway = await startGateway({
    jobs: { stepMs: 1 },
    deliveries: { retryDelaysMs: [] },
    ...gatewayOptions,
  });
  closers.push(() => gateway.close());
  const client = createClient({ baseUrl: gateway.baseUrl, apiKey: gateway.apiKey });
  const errors: string[] = [];
  const warnings: string[] = [];
  let heard: (alarm: SignatureAlarm) => void = () => undefined;
  const alarm = new Promise<SignatureAlarm>((resolve) => (heard = resolve));
  const observer: ReceiverObserver = {
    start: () => undefined,
    end: () => undefined,
    signaturesFailing: (raised) => heard(raised),
  };
  const receiver = createReceiver({
    secret: SECRET,
    observer,
    logger: { error: (line) => errors.push(line), warn: (line) => warnings.push(line) },
  }).onJobCompleted(() => undefined);
  const server = createServer(nodeHandler(receiver));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  closers.push(() => new Promise((resolve) => server.close(resolve)));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/`;
  await receiver.register({ client, url, ...(registerSecret !== undefined && { secret: registerSecret }) });
  const submit = async (jobs: number) => {
    for (let n = 0; n < jobs; n++) await client.images.generate({ model: 'm', prompt: `a fox ${n}` });
    await gateway.settled();
  };
  return { receiver, url, submit, alarm, errors, warnings };
}

const alarmLine = (lines: string[]) => lines.find((line) => line.includes('deliveries were all refused'));

describe('the signature alarm, confirmed by the gateway or not', () => {
  it("the gateway's deliveries signed with another secret: at error, confirmed", async () => {
    const { submit, alarm, errors } = await registered({}, OTHER_SECRET);
    await submit(10);
    expect(await alarm).toMatchObject({ refusedInARow: 10, confirmed: true });
    expect(alarmLine(errors)).toMatch(/The gateway confirms it.*secret probably differs/);
  });

  it("a stranger's forgeries with well-formed headers: at warn, unconfirmed, no error line", async () => {
    const { url, alarm, errors, warnings } = await registered({});
    for (let n = 0; n < 10; n++) {
      const forged = signDelivery({ secret: OTHER_SECRET, payload: completedPayload({ id: `evt_${n}` }) });
      const answer = await fetch(url, {
        method: 'POST',
        headers: forged.headers,
        body: forged.body as BodyInit,
      });
      expect(answer.status).toBe(401);
    }
    expect(await alarm).toMatchObject({ refusedInARow: 10, confirmed: false });
    expect(alarmLine(warnings)).toContain('Unconfirmed');
    expect(alarmLine(errors)).toBeUndefined();
  });

  it('a gateway that signs Stripe-style, the receiver on its defaults: at error, naming the header and jobhook probe', async () => {
    const { submit, alarm, errors, warnings } = await registered({ signing: 'stripe' });
    await submit(10);
    expect(await alarm).toMatchObject({ confirmed: true, foreignHeader: 'stripe-signature' });
    expect(alarmLine(errors)).toMatch(/they carry stripe-signature.*jobhook probe/);
    expect(warnings[0]).toMatch(/401 missing_header.*it carries stripe-signature.*jobhook probe/);
  });
});
