// `jobhook probe`: the built binary against the gateway simulator set to another contract. It
// reports it as JSON (and to a file), prints the receiver configuration, never prints the API key
// or a secret, asks before spending credits, and deletes its webhook on failure and on Ctrl+C.
import { once } from 'node:events';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createClient } from 'jobhook/client';
import { startGateway, type Gateway, type GatewayOptions } from 'jobhook/testing';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { BUILD_TIMEOUT_MS, ensureDist } from '../support/dist.js';
import { oneLineError, runCli, start } from './run-cli.js';

beforeAll(ensureDist, BUILD_TIMEOUT_MS);

let gateway: Gateway | undefined;
afterEach(async () => {
  await gateway?.close();
  gateway = undefined;
});

async function simulator(options: GatewayOptions = {}) {
  gateway = await startGateway({ jobs: { stepMs: 1 }, deliveries: { retryDelaysMs: [] }, ...options });
  const env = { GATEWAY_URL: gateway.baseUrl, GATEWAY_API_KEY: gateway.apiKey };
  const client = createClient({ baseUrl: gateway.baseUrl, apiKey: gateway.apiKey });
  return { gateway, env, client };
}

describe('jobhook probe', () => {
  it('prints usage with --help, and `jobhook help` lists it', async () => {
    const result = await runCli(['probe', '--help']);
    expect(result).toMatchObject({ code: 0, stderr: '' });
    expect(result.stdout).toMatch(/^Usage: jobhook probe \[options\]/);
    expect((await runCli(['help'])).stdout).toMatch(/^ {2}probe {2,}Learn how a gateway signs/m);
    expect((await runCli(['help', 'probe'])).stdout).toBe(result.stdout);
  });

  it('--json: the report of a GitHub-like signature, a flat payload and its retries; also in --out', async () => {
    const { env, client } = await simulator({
      signing: { scheme: 'hmac-sha256', header: 'x-signature', prefix: '', encoding: 'base64' },
      payload: 'flat',
      // Attempts at 0 s, 1 s and 5 s, answered 500 for 3 s: the second may come 2 s late (a busy
      // machine) and still be refused, and the third, never early, is the one answered 200.
      deliveries: { retryDelaysMs: [1000, 4000] },
    });
    const dir = await mkdtemp(join(tmpdir(), 'jobhook-probe-'));
    try {
      const file = join(dir, 'contract.json');
      const args = [
        'probe',
        '--yes',
        '--json',
        '--retries-for',
        '3',
        '--fail-prompt',
        'please fail',
        '--out',
        file,
      ];
      const result = await runCli(args, env);
      expect(result).toMatchObject({ code: 0, stderr: '' });
      const report = JSON.parse(result.stdout);
      expect(report).toMatchObject({
        signature: {
          scheme: 'hmac-sha256',
          header: 'x-signature',
          encoding: 'base64',
          prefix: '',
          secretForm: 'whsec-base64',
        },
        payload: {
          typePath: 'event',
          taskIdPath: 'task_id',
          imageUrlPath: 'image_url',
          errorPath: 'error',
          assumed: [],
        },
        retries: { measured: true, attempts: 3, delivered: true },
        check: { completed: 'handled', failed: 'handled', forgedRefused: true },
        contract: { signature: { scheme: 'hmac-sha256' }, payload: { typePath: 'event' } },
        probe: { webhookDeleted: true },
      });
      expect(report.retries.delaysMs).toHaveLength(2);
      expect(JSON.parse(await readFile(file, 'utf8'))).toEqual(report);
      expect(result.stdout).not.toContain(env.GATEWAY_API_KEY);
      expect(result.stdout).not.toMatch(/whsec_[A-Za-z0-9+/]{8}/);
      expect(await client.webhooks.list()).toEqual([]);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('prints what it found and the receiver configuration to paste', async () => {
    const { env } = await simulator({ signing: 'svix', payload: 'type-in-header' });
    const result = await runCli(['probe', '--yes'], env);
    expect(result).toMatchObject({ code: 0, stderr: '' });
    expect(result.stdout).toMatch(
      /^Signature: standard-webhooks, headers svix-id, svix-timestamp, svix-signature;/m,
    );
    expect(result.stdout).toMatch(/^Payload: type at "header:x-event-type"/m);
    expect(result.stdout).toMatch(/^Webhook \d+ deleted\.$/m);
    expect(result.stdout).toContain('Receiver configuration (TypeScript):');
    expect(result.stdout).toContain("  import { createReceiver, type ReceiverContract } from 'jobhook';");
    expect(result.stdout).not.toContain(env.GATEWAY_API_KEY);
    expect(result.stdout).not.toMatch(/whsec_[A-Za-z0-9+/]{8}/);
  });

  it('exits 1 when the report holds nothing a receiver can adopt', async () => {
    // A payload with no image URL: no contract can be made of it.
    const { env, client } = await simulator({
      payload: (event) => ({ kind: event.type, task: event.data.task_id }),
    });
    const result = await runCli(['probe', '--yes'], env);
    expect(result.code).toBe(1);
    expect(result.stdout).toMatch(/^Note: No contract/m);
    expect(result.stderr).toMatch(/^jobhook probe: nothing to adopt: no contract was found/m);
    expect(await client.webhooks.list()).toEqual([]);
  });

  it('a port in use: one line that names it and the fix, nothing submitted', async () => {
    const { env, gateway: sim } = await simulator();
    const taken = createServer().listen(0, '127.0.0.1');
    await once(taken, 'listening');
    const port = (taken.address() as AddressInfo).port;
    try {
      const result = await runCli(['probe', '--yes', '--port', String(port)], env);
      expect(result.code).toBe(1);
      expect(oneLineError(result)).toBe(
        `jobhook: 127.0.0.1:${port} is already in use: pass another --port, or leave --port out for a free one`,
      );
      expect(sim.requests).toEqual([]);
    } finally {
      await new Promise((resolve) => taken.close(resolve));
    }
  });

  it('refuses to spend credits without --yes when there is no terminal to ask on', async () => {
    const { env, gateway: sim } = await simulator();
    const result = await runCli(['probe'], env);
    expect(result.code).toBe(2);
    expect(oneLineError(result)).toMatch(/spends credits: pass --yes to go on/);
    expect(sim.requests).toEqual([]);
  });

  it('a job that fails: exit 1 in one line, the webhook deleted', async () => {
    const { env, client } = await simulator();
    const result = await runCli(['probe', '--yes', '--prompt', 'please fail'], env);
    expect(result.code).toBe(1);
    expect(oneLineError(result)).toMatch(
      /^jobhook: probe failed: the job task_\w+ ended failed: .*; its webhook \d+ was deleted$/,
    );
    expect(await client.webhooks.list()).toEqual([]);
  });

  it('Ctrl+C (SIGINT) while it waits: exit 1, the webhook deleted', async () => {
    const { env, client } = await simulator({ jobs: { auto: false } });
    const child = start(['probe', '--yes'], env);
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
    child.kill('SIGINT');
    const [code] = (await once(child, 'exit')) as [number | null];
    expect(code).toBe(1);
    expect(stderr).toMatch(/^jobhook: probe failed: interrupted \(SIGINT\); its webhook \d+ was deleted\n$/);
    expect(await client.webhooks.list()).toEqual([]);
  });
});
