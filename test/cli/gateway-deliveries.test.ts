// `jobhook gateway --drop-rate` and `--no-retries` (issue 22), `--signing` and `--payload`, and
// why a delivery fails in plain words, run as the built binary.
import { once } from 'node:events';
import { createClient } from 'jobhook/client';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { startSink } from '../gateway/support.js';
import { BUILD_TIMEOUT_MS, ensureDist } from '../support/dist.js';
import { oneLineError, runCli, startGatewayCli } from './run-cli.js';

beforeAll(ensureDist, BUILD_TIMEOUT_MS);

const stops: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const stop of stops.splice(0).reverse()) await stop();
});

async function gatewayWith(args: string[], answer: number, url?: string) {
  const gateway = await startGatewayCli(args);
  stops.push(async () => {
    if (gateway.child.exitCode !== null) return;
    gateway.child.kill('SIGTERM');
    await once(gateway.child, 'exit');
  });
  const endpoint = await startSink(() => answer);
  stops.push(endpoint.close);
  const client = createClient({ apiKey: gateway.apiKey, baseUrl: gateway.baseUrl });
  await client.webhooks.create({ url: url ?? endpoint.url, events: ['job.completed'], secret_key: 'shh' });
  await client.images.generate({ model: 'm', prompt: 'a lighthouse', aspect_ratio: '1:1' });
  const deliveries = async () => (await (await fetch(`${gateway.consoleUrl}/state`)).json()).deliveries;
  return { gateway, endpoint, deliveries };
}

describe('jobhook gateway: lost deliveries', () => {
  it('--drop-rate 1 never sends a delivery, and says so in its feed and its console', async () => {
    const { gateway, endpoint, deliveries } = await gatewayWith(['--drop-rate', '1'], 200);
    await expect.poll(deliveries).toEqual([expect.objectContaining({ state: 'dropped', attempts: [] })]);
    await expect
      .poll(gateway.output)
      .toMatch(/^ {2}delivery job\.completed task_\w+ -> webhook \d+: dropped \(never sent\)$/m);
    expect(endpoint.received).toHaveLength(0);
  });

  it('--no-retries makes one attempt per delivery', async () => {
    const { deliveries } = await gatewayWith(['--no-retries'], 500);
    await expect.poll(async () => (await deliveries())[0]?.state).toBe('failed');
    expect((await deliveries())[0].attempts).toHaveLength(1);
  });

  it.each([['2'], ['1.5'], ['half'], ['']])('--drop-rate %j is a usage error', async (value) => {
    const result = await runCli(['gateway', '--drop-rate', value]);
    expect(result.code).toBe(2);
    expect(oneLineError(result)).toMatch(/--drop-rate must be a number from 0 to 1/);
  });
});

describe('jobhook gateway: why a delivery fails', () => {
  it('a webhook at a domain that does not resolve is named, with a URL that would work', async () => {
    // .invalid never resolves (RFC 6761), as a placeholder such as my.app does not from here.
    const { gateway } = await gatewayWith(['--no-retries'], 200, 'https://nowhere.invalid/webhooks');
    await expect
      .poll(gateway.output)
      .toMatch(
        /delivery job\.completed task_\w+ -> webhook \d+: connection failed: could not resolve nowhere\.invalid \((ENOTFOUND|EAI_AGAIN)\): the simulator delivers from this machine; register a URL it can reach, such as http:\/\/127\.0\.0\.1:3000\/webhooks \(attempt 1\)$/m,
      );
  });
});

describe('jobhook gateway --signing and --payload', () => {
  it('signs and writes deliveries as asked', async () => {
    const { endpoint } = await gatewayWith(['--signing', 'stripe', '--payload', 'flat'], 200);
    const delivery = await endpoint.next();
    expect(delivery.headers['stripe-signature']).toMatch(/^t=\d+,v1=[0-9a-f]{64}$/);
    expect(delivery.headers['webhook-signature']).toBeUndefined();
    expect(JSON.parse(delivery.body)).toMatchObject({ event: 'job.completed', status: 'completed' });
  });

  it.each([
    [
      ['--signing', 'github'],
      /--signing must be one of standard-webhooks, svix, hmac-sha256, stripe, unsigned/,
    ],
    [['--payload', 'xml'], /--payload must be one of default, flat, nested, type-in-header/],
  ])('%j is a usage error', async (args, message) => {
    const result = await runCli(['gateway', ...args]);
    expect(result.code).toBe(2);
    expect(oneLineError(result)).toMatch(message);
  });
});

describe('jobhook gateway --ca', () => {
  it.each([
    [['--ca', '/no/such/ca.pem'], /cannot read the --ca file "\/no\/such\/ca.pem" \(ENOENT\)/],
    [['--ca', 'package.json'], /--ca must be a PEM certificate file/],
  ])('%j is a usage error', async (args, message) => {
    const result = await runCli(['gateway', ...args]);
    expect(result.code).toBe(2);
    expect(oneLineError(result)).toMatch(message);
  });
});
