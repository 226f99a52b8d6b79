// An interrupted probe leaves no webhook behind: interrupted while the gateway is slow to answer
// the registration (the webhook made, its id never learned), it finds the webhook by its URL and
// deletes it; a closed terminal (SIGHUP) ends it like Ctrl+C, with the webhook deleted.
import { once } from 'node:events';
import { createClient, type GatewayClient } from 'jobhook/client';
import { startGateway, type GatewayOptions } from 'jobhook/testing';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { ProbeError, runProbe } from '../../src/tools/probe/probe.js';
import { ensureDist } from '../support/dist.js';
import { start } from './run-cli.js';

beforeAll(ensureDist, 180_000);

const closers: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const close of closers.splice(0).reverse()) await close();
});

async function simulator(options: GatewayOptions = {}) {
  const gateway = await startGateway({ jobs: { stepMs: 1 }, deliveries: { retryDelaysMs: [] }, ...options });
  closers.push(() => gateway.close());
  const client = createClient({ baseUrl: gateway.baseUrl, apiKey: gateway.apiKey });
  return { gateway, client };
}

describe('an interrupted probe deletes its webhook', () => {
  it('interrupted while the registration is answered slowly: found by its URL and deleted', async () => {
    const { gateway, client } = await simulator();
    const stop = new AbortController();
    // The gateway makes the webhook, and its answer never comes before the interruption.
    const webhooks = Object.create(client.webhooks) as GatewayClient['webhooks'];
    webhooks.create = async (...args: Parameters<GatewayClient['webhooks']['create']>) => {
      await client.webhooks.create(args[0]);
      stop.abort(new Error('interrupted (SIGINT)'));
      throw stop.signal.reason;
    };
    const slow = Object.assign(Object.create(client) as GatewayClient, { webhooks });
    const error = (await runProbe({ client: slow, baseUrl: gateway.baseUrl, signal: stop.signal }).catch(
      (caught: unknown) => caught,
    )) as ProbeError;
    expect(error).toBeInstanceOf(ProbeError);
    expect(error).toMatchObject({
      message: expect.stringMatching(/interrupted \(SIGINT\)/),
      webhookId: expect.any(Number),
      webhookDeleted: true,
    });
    expect(await client.webhooks.list()).toEqual([]);
  });

  it('SIGHUP (a closed terminal) while it waits: exit 1, the webhook deleted', async () => {
    const { gateway } = await simulator({ jobs: { auto: false } });
    const client = createClient({ baseUrl: gateway.baseUrl, apiKey: gateway.apiKey });
    const child = start(['probe', '--yes'], {
      GATEWAY_URL: gateway.baseUrl,
      GATEWAY_API_KEY: gateway.apiKey,
    });
    let stdout = '';
    let stderr = '';
    child.stderr!.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    await new Promise<void>((resolve) =>
      child.stdout!.on('data', (chunk: Buffer) => {
        stdout += chunk.toString();
        if (/^Submitted task_/m.test(stdout)) resolve();
      }),
    );
    // The probe's webhook and its second one, with a plain secret.
    expect(await client.webhooks.list()).toHaveLength(2);
    child.kill('SIGHUP');
    const [code] = (await once(child, 'exit')) as [number | null];
    expect(code).toBe(1);
    expect(stderr).toMatch(/^jobhook: probe failed: interrupted \(SIGHUP\); its webhook \d+ was deleted\n$/);
    expect(await client.webhooks.list()).toEqual([]);
  });
});
