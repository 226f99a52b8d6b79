// Issue 24.2: one naming scheme (GATEWAY_URL, GATEWAY_API_KEY, WEBHOOK_SECRET), a fresh secret from
// `jobhook secret` and from the simulator's banner. Issue 24.4: time-outs that line up.
import { once } from 'node:events';
import { createReceiver } from 'jobhook';
import { signDelivery, startGateway } from 'jobhook/testing';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_SEND_TIMEOUT_MS } from '../../src/tools/cli/send.js';
import { resolveOptions } from '../../src/receiver/options.js';
import {
  DEFAULT_DELIVERY_TIMEOUT_MS,
  INTERACTIVE_RETRY_DELAYS_MS,
  resolveGatewayOptions,
} from '../../src/tools/simulator/config.js';
import { BUILD_TIMEOUT_MS, ensureDist } from '../support/dist.js';
import { runCli, startGatewayCli } from './run-cli.js';

beforeAll(ensureDist, BUILD_TIMEOUT_MS);

const stops: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const stop of stops.splice(0).reverse()) await stop();
});

/** A secret a receiver accepts: it verifies a delivery signed with it. */
async function works(secret: string) {
  const delivery = signDelivery({
    secret,
    payload: {
      id: 'evt_1',
      type: 'job.completed',
      created_at: new Date().toISOString(),
      data: { task_id: 't', status: 'completed', image_url: 'https://x/y.png' },
    },
  });
  const answer = await createReceiver({ secret }).receive({ headers: delivery.headers, body: delivery.body });
  return answer.status;
}

describe('jobhook secret', () => {
  it('prints a fresh whsec_ secret of 32 random bytes, which a receiver accepts', async () => {
    const [a, b] = await Promise.all([runCli(['secret']), runCli(['secret'])]);
    expect(a.code).toBe(0);
    const secret = a.stdout.trim();
    expect(secret).toMatch(/^whsec_[A-Za-z0-9+/]+=*$/);
    expect(Buffer.from(secret.slice(6), 'base64')).toHaveLength(32);
    expect(b.stdout.trim()).not.toBe(secret);
    expect(await works(secret)).toBe(200);
  });
});

describe('the names the README uses', () => {
  it('the simulator prints GATEWAY_URL, GATEWAY_API_KEY and a fresh WEBHOOK_SECRET', async () => {
    const gateway = await startGatewayCli(['--quiet']);
    stops.push(async () => {
      gateway.child.kill('SIGTERM');
      await once(gateway.child, 'exit');
    });
    const secret = /^WEBHOOK_SECRET=(whsec_\S+)$/m.exec(gateway.output())?.[1];
    expect(secret).toBeDefined();
    expect(await works(secret!)).toBe(200);
    expect(gateway.output()).not.toMatch(/JOBHOOK_/);
    // What it printed is what the other commands read.
    const listed = await runCli(['webhooks', 'list'], {
      GATEWAY_URL: gateway.baseUrl,
      GATEWAY_API_KEY: gateway.apiKey,
    });
    expect(listed).toMatchObject({ code: 0, stderr: '' });
  });

  it('the older JOBHOOK_* names still work, with one deprecation note each', async () => {
    const gateway = await startGateway();
    stops.push(() => gateway.close());
    const listed = await runCli(['webhooks', 'list'], {
      JOBHOOK_BASE_URL: gateway.baseUrl,
      JOBHOOK_API_KEY: gateway.apiKey,
    });
    expect(listed.code).toBe(0);
    expect(listed.stderr.trimEnd().split('\n').sort()).toEqual([
      'jobhook: note: JOBHOOK_API_KEY is deprecated; set GATEWAY_API_KEY instead',
      'jobhook: note: JOBHOOK_BASE_URL is deprecated; set GATEWAY_URL instead',
    ]);
    // The new name wins over the old one, without a note.
    const both = await runCli(['webhooks', 'list'], {
      GATEWAY_URL: gateway.baseUrl,
      JOBHOOK_BASE_URL: 'http://127.0.0.1:9',
      GATEWAY_API_KEY: gateway.apiKey,
    });
    expect(both).toMatchObject({ code: 0, stderr: '' });
  });
});

describe('time-outs that line up (docs/timeouts.md)', () => {
  const handlerTimeoutMs = resolveOptions({ secret: 'x' }).handlerTimeoutMs;

  it("the senders wait longer than the receiver's handler time-out, so its own answer arrives", () => {
    expect(resolveGatewayOptions().deliveryTimeoutMs).toBe(DEFAULT_DELIVERY_TIMEOUT_MS);
    expect(DEFAULT_DELIVERY_TIMEOUT_MS).toBeGreaterThan(handlerTimeoutMs);
    expect(DEFAULT_SEND_TIMEOUT_MS).toBeGreaterThan(handlerTimeoutMs);
  });

  it("jobhook gateway's retries span longer than one handler time-out", () => {
    const span = INTERACTIVE_RETRY_DELAYS_MS.reduce((sum, ms) => sum + ms, 0);
    expect(span).toBeGreaterThan(handlerTimeoutMs);
  });
});
