// An interrupted probe leaves no webhook behind: interrupted while the gateway is slow to answer
// the registration (the webhook made, its id never learned), it finds the webhook by its URL and
// deletes it; a closed terminal (SIGHUP) ends it like Ctrl+C, with the webhook deleted. A webhook
// the gateway will not delete (500 to the DELETE and to the lookup by URL) is named with the
// command that deletes it, after a report or a failure, and the probe exits 1.
import { once } from 'node:events';
import { createClient, type GatewayClient } from 'jobhook/client';
import { startGateway, type Gateway, type GatewayOptions } from 'jobhook/testing';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { ProbeError, runProbe } from '../../src/tools/probe/probe.js';
import { BUILD_TIMEOUT_MS, ensureDist } from '../support/dist.js';
import { oneLineError, runCli, start } from './run-cli.js';

beforeAll(ensureDist, BUILD_TIMEOUT_MS);

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

describe('a webhook the gateway will not delete', () => {
  /** The gateway answers 500 to every DELETE and to the list (the lookup by URL); `burn` ends that. */
  async function refusingDeletes(options: GatewayOptions = {}) {
    // No rate limit: spending the failures left takes a hundred requests.
    const { gateway } = await simulator({ rateLimit: false, ...options });
    for (const [method, path] of [
      ['DELETE', undefined],
      ['GET', '/api/v1/webhooks'],
    ] as const) {
      gateway.failNext({ status: 500, method, ...(path !== undefined && { path }), times: 100 });
    }
    const env = { GATEWAY_URL: gateway.baseUrl, GATEWAY_API_KEY: gateway.apiKey };
    /** Spends the failures left: a DELETE of no webhook is answered 404 once they are. */
    const burn = async () => {
      const headers = { authorization: `Bearer ${gateway.apiKey}` };
      while (
        (await fetch(`${gateway.baseUrl}/api/v1/webhooks/999999`, { method: 'DELETE', headers })).status ===
        500
      );
      while ((await fetch(`${gateway.baseUrl}/api/v1/webhooks`, { headers })).status === 500);
    };
    return { gateway, env, burn };
  }

  /** Webhooks the gateway made: the probe makes two, its own and one with a plain secret. */
  const webhooksMade = (gateway: Gateway) =>
    gateway.requests.filter((request) => request.method === 'POST' && request.path === '/api/v1/webhooks')
      .length;

  it('after a report: each webhook left is named with the command that deletes it, and it exits 1', async () => {
    const { gateway, env, burn } = await refusingDeletes();
    const result = await runCli(['probe', '--yes'], env);
    expect(webhooksMade(gateway)).toBe(2);
    const commands = [
      ...result.stdout.matchAll(
        /^Webhook (\d+) could not be deleted: run `(jobhook webhooks delete (\d+))`\.$/gm,
      ),
    ];
    expect(commands).toHaveLength(2);
    const ids = commands.map((command) => Number(command[1]));
    for (const command of commands) expect(command[3]).toBe(command[1]);
    for (const id of ids) expect(gateway.webhook(id)).toBeDefined();
    expect(result.code).toBe(1);
    expect(result.stderr).toBe(
      `jobhook probe: its webhooks ${ids[0]} and ${ids[1]} could not be deleted: run \`jobhook webhooks delete ${ids[0]}\` and \`jobhook webhooks delete ${ids[1]}\`\n`,
    );
    // The commands do delete them, once the gateway does.
    await burn();
    for (const command of commands) {
      expect(await runCli(command[2]!.split(' ').slice(1), env)).toMatchObject({ code: 0 });
    }
    for (const id of ids) expect(gateway.webhook(id)).toBeUndefined();
  });

  it('after a failure: the one error line names each webhook left and the command, exit 1', async () => {
    const { gateway, env } = await refusingDeletes();
    const result = await runCli(['probe', '--yes', '--prompt', 'please fail'], env);
    expect(webhooksMade(gateway)).toBe(2);
    expect(result.code).toBe(1);
    const line = oneLineError(result);
    const found =
      /^jobhook: probe failed: the job task_\w+ ended failed: .*; its webhooks (\d+) and (\d+) could not be deleted: run `jobhook webhooks delete \1` and `jobhook webhooks delete \2`$/.exec(
        line,
      );
    expect(found, line).not.toBeNull();
    for (const id of found!.slice(1)) expect(gateway.webhook(Number(id))).toBeDefined();
  });
});
