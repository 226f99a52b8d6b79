// The self-registration example, started the two ways a user would: imported, and run directly.
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { once } from 'node:events';
import { fileURLToPath } from 'node:url';
import { afterEach, expect, test } from 'vitest';
import { createClient } from 'jobhook/client';
import { signDelivery, startGateway, type Gateway } from 'jobhook/testing';
import { start } from '../../examples/self-registration/server.js';
import { completedPayload as completed, SECRET } from '../fixtures.js';

const root = fileURLToPath(new URL('../..', import.meta.url));
/** A child process compiles the example with tsx first: bounded to end a hang, not to time it. */
const CHILD_TIMEOUT_MS = 120_000;
const cleanups: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/** A log that can be awaited for a line matching a pattern. */
function logSink() {
  const lines: string[] = [];
  const waiters: { pattern: RegExp; resolve: (line: string) => void }[] = [];
  return {
    lines,
    log: (line: string) => {
      lines.push(line);
      for (const waiter of waiters.splice(0)) {
        if (waiter.pattern.test(line)) waiter.resolve(line);
        else waiters.push(waiter);
      }
    },
    waitFor(pattern: RegExp): Promise<string> {
      const found = lines.find((line) => pattern.test(line));
      return found ? Promise.resolve(found) : new Promise((resolve) => waiters.push({ pattern, resolve }));
    },
  };
}

async function simulator(): Promise<Gateway> {
  const gateway = await startGateway({ jobs: { stepMs: 1 } });
  cleanups.push(() => gateway.close());
  return gateway;
}

test('registers on startup, receives its job, and reuses the webhook after a restart on the same port', async () => {
  const gateway = await simulator();
  const output = logSink();
  const options = {
    gatewayUrl: gateway.baseUrl,
    apiKey: gateway.apiKey,
    secret: SECRET,
    port: 0,
    log: output.log,
  };
  const first = await start(options);
  await first.registration;
  expect(output.lines).toEqual([
    expect.stringMatching(/^Receiving webhooks at http:\/\/127\.0\.0\.1:\d+\/webhooks$/),
    expect.stringMatching(/^Registered webhook \d+ for http:\/\/127\.0\.0\.1:\d+\/webhooks$/),
  ]);
  const job = await first.client.images.generate({ model: 'm', prompt: 'p' });
  await output.waitFor(new RegExp(`job ${job.task_id} completed: https://`));
  await first.close();

  const port = Number(new URL(first.url).port);
  const second = await start({ ...options, port });
  cleanups.push(() => second.close());
  await second.registration;
  expect(output.lines.at(-1)).toMatch(/^Reusing webhook \d+ for /);
  expect(await second.client.webhooks.list()).toHaveLength(1);
});

test('a registration failure (a wrong API key) is logged once, and the server stays up and answers', async () => {
  const gateway = await simulator();
  const errors: string[] = [];
  const app = await start({
    gatewayUrl: gateway.baseUrl,
    apiKey: 'sk_wrong_key_of_the_example_test',
    secret: SECRET,
    port: 0,
    log: () => undefined,
    logError: (line) => errors.push(line),
  });
  cleanups.push(() => app.close());
  expect(await app.registration).toBeUndefined();
  expect(errors).toEqual([
    expect.stringMatching(/^The webhook is not registered, so no delivery will arrive: /),
  ]);
  expect(errors[0]).not.toContain('sk_wrong_key_of_the_example_test');
  const delivery = signDelivery({ secret: SECRET, payload: completed() });
  const response = await fetch(app.url, {
    method: 'POST',
    headers: delivery.headers,
    body: delivery.body as BodyInit,
  });
  expect(response.status).toBe(200);
});

/** examples/self-registration/server.ts run with tsx against `baseUrl`, killed after the test. */
function runExample(baseUrl: string, apiKey: string): ChildProcessWithoutNullStreams {
  const child = spawn(process.execPath, ['--import', 'tsx', 'examples/self-registration/server.ts'], {
    cwd: root,
    env: { ...process.env, GATEWAY_URL: baseUrl, GATEWAY_API_KEY: apiKey, WEBHOOK_SECRET: SECRET, PORT: '0' },
  });
  cleanups.push(async () => {
    if (child.exitCode === null) {
      const exited = once(child, 'exit');
      child.kill();
      await exited;
    }
  });
  return child;
}

/** A log sink fed the lines of `stream` as they come. */
function linesOf(stream: NodeJS.ReadableStream) {
  const sink = logSink();
  let buffered = '';
  stream.on('data', (data: Buffer) => {
    buffered += data.toString('utf8');
    const lines = buffered.split('\n');
    buffered = lines.pop()!;
    for (const line of lines) sink.log(line);
  });
  return sink;
}

test(
  'runs directly with tsx, configured by GATEWAY_URL, GATEWAY_API_KEY, WEBHOOK_SECRET and PORT',
  async () => {
    const gateway = await simulator();
    const child = runExample(gateway.baseUrl, gateway.apiKey);
    const output = linesOf(child.stdout);
    await output.waitFor(/^Registered webhook \d+ for /);
    const client = createClient({ apiKey: gateway.apiKey, baseUrl: gateway.baseUrl });
    const job = await client.images.generate({ model: 'm', prompt: 'from the test' });
    await output.waitFor(new RegExp(`job ${job.task_id} completed`));
  },
  CHILD_TIMEOUT_MS,
);

test(
  'run directly with a wrong GATEWAY_API_KEY, it reports the failure on stderr and keeps serving',
  async () => {
    const gateway = await simulator();
    const child = runExample(gateway.baseUrl, 'sk_wrong_key_of_the_example_test');
    let exited = false;
    const exit = once(child, 'exit').then(([code]: unknown[]) => {
      exited = true;
      throw new Error(`the example exited (${String(code)}) while it should keep serving`);
    });
    exit.catch(() => undefined); // awaited below, in races
    const stdout = linesOf(child.stdout);
    const stderr = linesOf(child.stderr);
    const url = (await Promise.race([stdout.waitFor(/^Receiving webhooks at /), exit])).replace(
      'Receiving webhooks at ',
      '',
    );
    const failure = await Promise.race([stderr.waitFor(/^The webhook is not registered/), exit]);
    expect(failure).not.toContain('sk_wrong_key_of_the_example_test');

    // Before the fix, the rejection was left unhandled and the process ended here.
    const delivery = signDelivery({ secret: SECRET, payload: completed() });
    const response = await fetch(url, {
      method: 'POST',
      headers: delivery.headers,
      body: delivery.body as BodyInit,
    });
    expect(response.status).toBe(200);
    expect(exited).toBe(false);
  },
  CHILD_TIMEOUT_MS,
);
