// `jobhook generate "<prompt>" [--wait]`: the built binary against the gateway simulator.
import { startGateway, type Gateway } from 'jobhook/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BUILD_TIMEOUT_MS, ensureDist } from '../support/dist.js';
import { oneLineError, runCli } from './run-cli.js';

beforeAll(ensureDist, BUILD_TIMEOUT_MS);

let gateway: Gateway;
let env: Record<string, string>;
beforeAll(async () => {
  gateway = await startGateway({
    jobs: {
      stepMs: 1,
      outcome: (job) =>
        job.prompt.includes('fail')
          ? { status: 'failed', error: { code: 'generation_failed', message: 'The prompt asked to fail.' } }
          : job.prompt.includes('never')
            ? { status: 'unknown' }
            : { status: 'completed' },
    },
  });
  env = { GATEWAY_API_KEY: gateway.apiKey, GATEWAY_URL: gateway.baseUrl };
});
afterAll(() => gateway.close());

describe('jobhook generate', () => {
  it('prints usage with --help', async () => {
    const result = await runCli(['generate', '--help']);
    expect(result).toMatchObject({ code: 0 });
    expect(result.stdout).toMatch(/^Usage: jobhook generate "<prompt>"/);
  });

  it('submits a job and prints its task id', async () => {
    const result = await runCli(['generate', 'a fox'], env);
    expect(result).toMatchObject({ code: 0, stderr: '' });
    expect(result.stdout).toMatch(/^Submitted task_\w+ \(10 credits, \d+ left\)\n$/);
  });

  it('--wait prints the image URL when the job ends, with the model and ratio asked for', async () => {
    const result = await runCli(
      ['generate', 'a lighthouse', '--wait', '--model', 'pix-2', '--aspect-ratio', '16:9'],
      env,
    );
    expect(result).toMatchObject({ code: 0, stderr: '' });
    const [submitted, url] = result.stdout.trimEnd().split('\n');
    const taskId = /Submitted (task_\w+)/.exec(submitted!)![1]!;
    expect(url).toBe(`https://images.gateway-simulator.invalid/${taskId}.png`);
  });

  it('--wait --json prints the finished task', async () => {
    const result = await runCli(['generate', 'a fox', '--wait', '--json'], env);
    expect(result.code).toBe(0);
    expect(JSON.parse(result.stdout)).toMatchObject({ status: 'completed', image_url: expect.any(String) });
  });

  it('--wait exits 1 with the job error in one line when the job fails', async () => {
    const result = await runCli(['generate', 'please fail', '--wait'], env);
    expect(result.code).toBe(1);
    expect(oneLineError(result)).toMatch(
      /^jobhook: job task_\w+ failed \(generation_failed\): The prompt asked to fail$/,
    );
  });

  it('--wait --timeout says the job keeps running', async () => {
    const result = await runCli(['generate', 'never ends', '--wait', '--timeout', '300'], env);
    expect(result.code).toBe(1);
    expect(oneLineError(result)).toMatch(
      /job task_\w+ did not end within 300 ms; it keeps running at the gateway/,
    );
  });

  it.each([
    [['generate'], /generate needs the prompt/],
    [['generate', 'a', 'fox'], /unexpected argument "fox" \(quote the prompt/],
    [['generate', 'a fox', '--aspect-ratio', 'wide'], /--aspect-ratio must be <width>:<height>/],
    [['generate', 'a fox', '--timeout', '5'], /--timeout applies to --wait/],
  ])('jobhook %j exits 2 with one line', async (args, message) => {
    const result = await runCli(args, env);
    expect(result.code).toBe(2);
    expect(oneLineError(result)).toMatch(message);
  });

  it('needs GATEWAY_API_KEY and GATEWAY_URL, like webhooks', async () => {
    const result = await runCli(['generate', 'a fox']);
    expect(result.code).toBe(2);
    expect(oneLineError(result)).toMatch(/no API key/);
  });
});
