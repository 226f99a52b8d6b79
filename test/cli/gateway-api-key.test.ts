// `jobhook gateway` keeps one API key across restarts (issue: a new key on every start made the
// app's .env stale, every call 401): the same in one folder, --api-key to choose it, and a clear
// usage error for a key that cannot be one. Run as the built binary.
import { once } from 'node:events';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { call } from '../gateway/support.js';
import { BUILD_TIMEOUT_MS, ensureDist } from '../support/dist.js';
import { oneLineError, runCli, startGatewayCli } from './run-cli.js';

beforeAll(ensureDist, BUILD_TIMEOUT_MS);

const stops: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const stop of stops.splice(0).reverse()) await stop();
});

let elsewhere: string;
beforeAll(async () => {
  elsewhere = await mkdtemp(join(tmpdir(), 'jobhook-gateway-key-'));
});
afterAll(() => rm(elsewhere, { recursive: true, force: true }));

/** Starts `jobhook gateway`, stopped after the test; resolves once it printed its settings. */
async function run(args: string[] = [], cwd?: string) {
  const gateway = await startGatewayCli(args, cwd);
  stops.push(() => stop(gateway));
  return gateway;
}

/** Ends a run (a SIGTERM before its handler is set ends it by the signal: no exit code then). */
async function stop({ child }: Awaited<ReturnType<typeof startGatewayCli>>) {
  if (child.exitCode !== null || child.signalCode !== null) return;
  child.kill('SIGTERM');
  await once(child, 'exit');
}

describe('jobhook gateway: the API key', () => {
  it('is the same on every run in one folder, and another in another folder', async () => {
    const first = await run();
    await stop(first);
    const second = await run();
    const other = await run([], elsewhere);
    expect(second.apiKey).toBe(first.apiKey);
    expect(other.apiKey).not.toBe(first.apiKey);
    expect(second.output()).toMatch(/GATEWAY_API_KEY is the same on every run in this folder/);
    // The key of the earlier run still opens the new one: a .env written then still works.
    const listed = await call(second.baseUrl, 'GET', '/api/v1/webhooks', { apiKey: first.apiKey });
    expect(listed.status).toBe(200);
  });

  it('--api-key sets the key the simulator accepts', async () => {
    const key = 'sk_my_own_simulator_key_0001';
    const gateway = await run(['--api-key', key]);
    expect(gateway.apiKey).toBe(key);
    expect((await call(gateway.baseUrl, 'GET', '/api/v1/webhooks', { apiKey: key })).status).toBe(200);
    expect((await call(gateway.baseUrl, 'GET', '/api/v1/webhooks', { apiKey: `${key}x` })).status).toBe(401);
  });

  it('is random beyond this machine (a key derived from a path can be guessed)', async () => {
    const first = await run(['--host', '0.0.0.0']);
    await stop(first);
    const second = await run(['--host', '0.0.0.0']);
    expect(second.apiKey).not.toBe(first.apiKey);
    expect(second.output()).toMatch(/GATEWAY_API_KEY is random/);
  });

  it.each([
    ['empty', ''],
    ['short', 'sk_short'],
    ['with a space', 'sk_simulator key 0123456789'],
    ['with a control character', 'sk_simulator\u0007key_0123456789'],
    ['too long', `sk_${'k'.repeat(300)}`],
    ['not ASCII', 'sk_simulator_clé_0123456789'],
  ])('refuses a key that is %s, without echoing it', async (_name, key) => {
    const result = await runCli(['gateway', '--api-key', key]);
    expect(result.code).toBe(2);
    const line = oneLineError(result);
    expect(line).toMatch(/--api-key must be 16 to 256 visible ASCII characters/);
    if (key.length > 0) expect(line).not.toContain(key.slice(0, 12));
  });
});
