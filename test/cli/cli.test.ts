// Runs the built binary (dist/cli.js) as a child process against a real receiver and the simulator.
import { once } from 'node:events';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createReceiver, type JobCompletedEvent, type JobFailedEvent } from 'jobhook';
import { createClient } from 'jobhook/client';
import { nodeHandler } from 'jobhook/node';
import { startGateway, type Gateway } from 'jobhook/testing';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { BUILD_TIMEOUT_MS, ensureDist } from '../support/dist.js';
import { oneLineError, runCli, start } from './run-cli.js';
import { SECRET } from '../fixtures.js';

beforeAll(ensureDist, BUILD_TIMEOUT_MS);

describe('jobhook --help', () => {
  it.each([
    [[]],
    [['--help']],
    [['help']],
    [['gateway', '--help']],
    [['send', '--help']],
    [['send', '-h']],
    [['webhooks', '--help']],
    [['webhooks', 'list', '--help']],
    [['webhooks', 'register', '--help']],
    [['webhooks', 'delete', '--help']],
  ])('jobhook %j prints usage', async (args) => {
    const result = await runCli(args);
    // Without a command, usage goes to stderr with exit code 2; asked for, to stdout with 0.
    const text = args.length === 0 ? result.stderr : result.stdout;
    expect(text).toMatch(/^Usage: jobhook/);
    expect(result.code).toBe(args.length === 0 ? 2 : 0);
  });

  it('prints the package version', async () => {
    const result = await runCli(['--version']);
    expect(result.stdout.trim()).toMatch(/^\d+\.\d+\.\d+/);
    expect(result.code).toBe(0);
  });
});

describe('bad command lines', () => {
  it.each([
    [['frobnicate'], /unknown command "frobnicate"/],
    [['send'], /needs the receiver URL/],
    [['send', 'not a url', '--secret', 's'], /not an absolute URL/],
    [['send', 'ftp://127.0.0.1/', '--secret', 's'], /http or https/],
    [['send', 'http://127.0.0.1:9/'], /--secret, or WEBHOOK_SECRET/],
    [['send', 'http://127.0.0.1:9/', '--secret'], /argument missing/],
    [['send', 'http://127.0.0.1:9/', '--secret', 's', '--bogus'], /Unknown option '--bogus'/],
    [['send', 'http://127.0.0.1:9/', '--secret', 's', '--type', 'job.started'], /--type must be/],
    [['send', 'http://127.0.0.1:9/', '--secret', 's', '--timeout', 'soon'], /--timeout must be/],
    [['send', 'http://127.0.0.1:9/', '/no/such/file.json', '--secret', 's'], /cannot read the payload file/],
    [['webhooks'], /./],
    [['webhooks', 'purge'], /unknown command "webhooks purge"/],
    [['webhooks', 'list'], /no API key/],
    [['webhooks', 'list', '--api-key', 'k'], /no gateway address/],
    [['webhooks', 'list', '--api-key', 'k', '--base-url', 'nowhere'], /not an absolute URL/],
    [
      ['webhooks', 'delete', 'seven', '--api-key', 'k', '--base-url', 'http://127.0.0.1:9'],
      /must be a number/,
    ],
    [
      ['webhooks', 'register', '--api-key', 'k', '--base-url', 'http://127.0.0.1:9'],
      /needs the receiver URL/,
    ],
    [['gateway', 'extra'], /unexpected argument "extra"/],
    [['gateway', '--port', 'eighty'], /--port must be a non-negative integer: "eighty"/],
    [['gateway', '--port', '70000'], /--port must be at most 65535/],
  ])('jobhook %j exits 2 with one line', async (args, message) => {
    const result = await runCli(args);
    expect(result.code).toBe(2);
    // `jobhook webhooks` alone prints its usage instead of an error line.
    if (args.length === 1 && args[0] === 'webhooks') return expect(result.stderr).toMatch(/^Usage:/);
    expect(oneLineError(result)).toMatch(message);
    expect(result.stdout).toBe('');
  });

  it('names a malformed whsec_ secret without printing it', async () => {
    const secret = 'whsec_not*base64*at*all';
    const result = await runCli(['send', 'http://127.0.0.1:9/', '--secret', secret]);
    expect(result.code).toBe(2);
    expect(oneLineError(result)).toMatch(/must be base64 after the prefix/);
    expect(result.stderr + result.stdout).not.toContain('not*base64');
  });
});

describe('jobhook send', () => {
  let server: Server;
  let url: string;
  const completed: JobCompletedEvent[] = [];
  const failed: JobFailedEvent[] = [];
  let dir: string;

  beforeAll(async () => {
    const receiver = createReceiver({ secret: SECRET })
      .onJobCompleted((event) => void completed.push(event))
      .onJobFailed((event) => void failed.push(event));
    server = createServer(nodeHandler(receiver, { path: '/webhooks' }));
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/webhooks`;
    dir = await mkdtemp(join(tmpdir(), 'jobhook-cli-'));
  });
  afterAll(async () => {
    server.close();
    await rm(dir, { recursive: true, force: true });
  });

  it('delivers a signed job.completed the receiver accepts, and prints the answer', async () => {
    const result = await runCli(['send', url, '--secret', SECRET]);
    expect(result).toMatchObject({ code: 0, stderr: '' });
    expect(result.stdout).toBe('200 OK\n{"ok":true}\n');
    expect(completed).toHaveLength(1);
    expect(completed[0]!.data.image_url).toMatch(/^https:\/\//);
    expect(result.stdout).not.toContain(SECRET);
  });

  it('delivers a job.failed with --type, the secret taken from WEBHOOK_SECRET', async () => {
    const result = await runCli(['send', url, '--type', 'job.failed'], { WEBHOOK_SECRET: SECRET });
    expect(result.code).toBe(0);
    expect(failed).toHaveLength(1);
    expect(failed[0]!.data.error).toEqual({ code: expect.any(String), message: expect.any(String) });
  });

  it('exits 1 and prints the 401 for a wrong secret', async () => {
    const before = completed.length;
    const result = await runCli(['send', url, '--secret', 'not-the-secret']);
    expect(result.code).toBe(1);
    expect(result.stdout).toMatch(/^401 Unauthorized\n\{.*"invalid_signature"/);
    expect(result.stdout + result.stderr).not.toContain('not-the-secret');
    expect(completed).toHaveLength(before);
  });

  it('repeats a delivery id: the second answer is a duplicate and the handler runs once', async () => {
    const before = completed.length;
    const first = await runCli(['send', url, '--secret', SECRET, '--id', 'msg_cli_repeat']);
    const second = await runCli(['send', url, '--secret', SECRET, '--id', 'msg_cli_repeat']);
    expect([first.code, second.code]).toEqual([0, 0]);
    expect(second.stdout).toMatch(/"duplicate":true/);
    expect(completed).toHaveLength(before + 1);
  });

  it('sends an old --timestamp, which the receiver refuses as outside its tolerance', async () => {
    const result = await runCli(['send', url, '--secret', SECRET, '--timestamp', '1000000000']);
    expect(result.code).toBe(1);
    expect(result.stdout).toMatch(/^401 /);
  });

  it('sends a payload file byte for byte', async () => {
    const valid = join(dir, 'completed.json');
    await writeFile(
      valid,
      JSON.stringify({
        id: 'evt_from_file',
        type: 'job.completed',
        created_at: '2026-11-21T10:00:00Z',
        data: { task_id: 'task_file', status: 'completed', image_url: 'https://x.test/a.png', extra: 1 },
      }),
    );
    const ok = await runCli(['send', url, valid, '--secret', SECRET]);
    expect(ok.code).toBe(0);
    expect(completed.at(-1)!.data).toMatchObject({ task_id: 'task_file', extra: 1 });

    const broken = join(dir, 'broken.json');
    await writeFile(broken, '{"type": "job.completed", ');
    const bad = await runCli(['send', url, broken, '--secret', SECRET]);
    expect(bad.code).toBe(1);
    expect(bad.stdout).toMatch(/^400 Bad Request\n/);
  });

  it('refuses --type together with a payload file', async () => {
    const result = await runCli([
      'send',
      url,
      join(dir, 'completed.json'),
      '--type',
      'job.failed',
      '--secret',
      's',
    ]);
    expect(result.code).toBe(2);
    expect(oneLineError(result)).toMatch(/payload file is sent as it is/);
  });

  it('reports an unreachable receiver in one line, exit 1', async () => {
    const closed = createServer();
    closed.listen(0, '127.0.0.1');
    await once(closed, 'listening');
    const port = (closed.address() as AddressInfo).port;
    closed.close();
    await once(closed, 'close');
    const result = await runCli(['send', `http://127.0.0.1:${port}/`, '--secret', SECRET]);
    expect(result.code).toBe(1);
    expect(oneLineError(result)).toMatch(/could not deliver to .*ECONNREFUSED/);
  });
});

describe('jobhook webhooks', () => {
  let gateway: Gateway;
  let env: Record<string, string>;
  beforeAll(async () => {
    gateway = await startGateway();
    env = { GATEWAY_API_KEY: gateway.apiKey, GATEWAY_URL: gateway.baseUrl };
  });
  afterAll(() => gateway.close());

  it('registers, reuses, lists and deletes, with the key and address from the environment', async () => {
    const empty = await runCli(['webhooks', 'list'], env);
    expect(empty).toMatchObject({ code: 0, stdout: 'No webhooks.\n' });

    const created = await runCli(
      ['webhooks', 'register', 'https://app.test/webhooks', '--secret', SECRET],
      env,
    );
    expect(created.code).toBe(0);
    expect(created.stdout).toMatch(
      /^Created webhook (\d+): job\.completed,job\.failed -> https:\/\/app\.test\/webhooks/,
    );
    const id = Number(/webhook (\d+)/.exec(created.stdout)![1]);
    expect(gateway.webhook(id)?.secret_key).toBe(SECRET);
    expect(created.stdout).not.toContain(SECRET);

    const reused = await runCli(
      ['webhooks', 'register', 'https://app.test/webhooks', '--secret', SECRET],
      env,
    );
    expect(reused.stdout).toMatch(new RegExp(`^Reused webhook ${id}:`));

    const listed = await runCli(['webhooks', 'list'], env);
    expect(listed.code).toBe(0);
    const [header, row, ...rest] = listed.stdout.trimEnd().split('\n');
    expect(header).toMatch(/^ID\s+STATUS\s+EVENTS\s+SENT\s+FAILED\s+URL\s+LAST ERROR$/);
    expect(row).toMatch(
      new RegExp(`^${id}\\s+active\\s+job.completed,job.failed\\s+0\\s+0\\s+https://app.test/webhooks\\s+-$`),
    );
    expect(rest).toEqual([]);

    const json = await runCli(['webhooks', 'list', '--json'], env);
    expect(JSON.parse(json.stdout)).toMatchObject([
      { id, url: 'https://app.test/webhooks', status: 'active' },
    ]);

    const deleted = await runCli(['webhooks', 'delete', String(id)], env);
    expect(deleted).toMatchObject({ code: 0, stdout: `Deleted webhook ${id}\n` });
    expect(gateway.webhook(id)).toBeUndefined();

    const again = await runCli(['webhooks', 'delete', String(id)], env);
    expect(again.code).toBe(1);
    expect(oneLineError(again)).toMatch(/404 not_found/);
  });

  it('takes --api-key and --base-url over the environment, and reports a refused key in one line', async () => {
    const flags = ['--api-key', gateway.apiKey, '--base-url', gateway.baseUrl];
    const ok = await runCli(['webhooks', 'list', ...flags], {
      GATEWAY_API_KEY: 'wrong',
      GATEWAY_URL: 'x',
    });
    expect(ok.code).toBe(0);

    const refused = await runCli(['webhooks', 'list', '--api-key', 'sk_wrong_key'], env);
    expect(refused.code).toBe(1);
    expect(oneLineError(refused)).toMatch(/401 unauthorized/);
    expect(refused.stderr).not.toContain('sk_wrong_key');
  });

  it('register against a failing gateway fails at once in one line: no startup retries', async () => {
    let requests = 0;
    const failing = createServer((_req, res) => {
      requests++;
      const body = JSON.stringify({ success: false, error: { code: 'unavailable', message: 'down' } });
      res.writeHead(503, { 'content-type': 'application/json' }).end(body);
    });
    failing.listen(0, '127.0.0.1');
    await once(failing, 'listening');
    const baseUrl = `http://127.0.0.1:${(failing.address() as AddressInfo).port}`;
    try {
      const result = await runCli(['webhooks', 'register', 'https://app.test/hook'], {
        GATEWAY_API_KEY: 'sk_test',
        GATEWAY_URL: baseUrl,
      });
      expect(result.code).toBe(1);
      expect(oneLineError(result)).toMatch(/503/);
      // One list call and the client's own two retries of it; startup retries would repeat them.
      expect(requests).toBe(3);
    } finally {
      failing.close();
    }
  });

  it('register --events and --json: one event type, the result as JSON', async () => {
    const result = await runCli(
      [
        'webhooks',
        'register',
        'https://other.test/hook',
        '--events',
        'job.failed',
        '--json',
        '--secret',
        'plain',
      ],
      env,
    );
    expect(result.code).toBe(0);
    const parsed = JSON.parse(result.stdout);
    expect(parsed).toMatchObject({ created: true, deleted: [], webhook: { events: ['job.failed'] } });
    expect(result.stdout).not.toContain('plain');
  });
});

describe('jobhook gateway', () => {
  let child: ReturnType<typeof start> | undefined;
  afterEach(() => {
    if (child && child.exitCode === null) child.kill('SIGKILL');
  });

  it.each(['SIGTERM', 'SIGINT'] as const)(
    'serves jobs and signed deliveries until %s, then exits 0',
    async (signal) => {
      child = start(['gateway', '--fail-when', 'melt']);
      let output = '';
      const printed = await new Promise<Record<string, string>>((resolve, reject) => {
        child!.stdout!.on('data', (chunk: Buffer) => {
          output += chunk.toString();
          const url = /^GATEWAY_URL=(.+)$/m.exec(output)?.[1];
          const key = /^GATEWAY_API_KEY=(.+)$/m.exec(output)?.[1];
          if (url && key) resolve({ GATEWAY_URL: url, GATEWAY_API_KEY: key });
        });
        child!.on('exit', (code) => reject(new Error(`jobhook gateway exited (${code}): ${output}`)));
      });
      const client = createClient({ apiKey: printed.GATEWAY_API_KEY!, baseUrl: printed.GATEWAY_URL! });

      // A receiver registered through the CLI gets one typed event per job.
      const events: string[] = [];
      let allArrived: () => void = () => undefined;
      const arrived = new Promise<void>((resolve) => (allArrived = resolve));
      const receiver = createReceiver({ secret: SECRET }).onAny((event) => {
        events.push(`${event.type} ${(event.data as { task_id: string }).task_id}`);
        if (events.length === 2) allArrived();
      });
      const server = createServer(nodeHandler(receiver)).listen(0, '127.0.0.1');
      await once(server, 'listening');
      try {
        const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/`;
        const registered = await runCli(['webhooks', 'register', url, '--secret', SECRET], printed);
        expect(registered.code).toBe(0);
        const good = await client.images.generate({
          model: 'm',
          prompt: 'a lighthouse',
          aspect_ratio: '1:1',
        });
        const bad = await client.images.generate({ model: 'm', prompt: 'melt it', aspect_ratio: '1:1' });
        await arrived;
        expect(events.sort()).toEqual([`job.completed ${good.task_id}`, `job.failed ${bad.task_id}`].sort());
      } finally {
        server.close();
      }

      // The simulator records a delivery once the receiver's answer is back: wait for both.
      await expect.poll(async () => (await client.webhooks.list())[0]?.total_sent).toBe(2);
      child.kill(signal);
      const [code] = (await once(child, 'exit')) as [number | null];
      expect(code).toBe(0);
      // Each request and delivery was reported as it happened (the rest just before stopping).
      expect(output).toMatch(/^ {2}POST \/api\/v1\/webhooks -> 200$/m);
      expect(output).toMatch(/^ {2}POST \/api\/v1\/images\/generate -> 200$/m);
      expect(output).toMatch(/^ {2}delivery job\.completed task_\w+ -> webhook \d+: 200 \(attempt 1\)$/m);
      expect(output).toMatch(/^ {2}delivery job\.failed task_\w+ -> webhook \d+: 200 \(attempt 1\)$/m);
      expect(output.trimEnd().split('\n').at(-1)).toBe(`Stopped (${signal}).`);
    },
  );

  it('serves the console from the built package, and stops with a console stream open', async () => {
    child = start(['gateway']);
    let output = '';
    const consoleUrl = await new Promise<string>((resolve, reject) => {
      child!.stdout!.on('data', (chunk: Buffer) => {
        output += chunk.toString();
        const url = /^Console: (http:\/\/127\.0\.0\.1:\d+\/_console) /m.exec(output)?.[1];
        if (url) resolve(url);
      });
      child!.on('exit', (code) => reject(new Error(`jobhook gateway exited (${code}): ${output}`)));
    });
    const page = await fetch(consoleUrl);
    expect(page.status).toBe(200);
    expect(await page.text()).toContain('<title>jobhook gateway console</title>');
    const stream = await fetch(`${consoleUrl}/events`);
    expect(stream.headers.get('content-type')).toMatch(/^text\/event-stream/);
    const reader = stream.body!.getReader();
    expect(new TextDecoder().decode((await reader.read()).value)).toMatch(/event: state\ndata: \{/);
    child.kill('SIGINT');
    const [code] = (await once(child, 'exit')) as [number | null];
    expect(code).toBe(0);
    await reader.cancel().catch(() => undefined);
  });

  it('listens on --port and --host, and says so in one line when the port is taken', async () => {
    const taken = createServer().listen(0, '127.0.0.1');
    await once(taken, 'listening');
    const port = (taken.address() as AddressInfo).port;
    try {
      const busy = await runCli(['gateway', '--port', String(port), '--host', '127.0.0.1']);
      expect(busy.code).toBe(1);
      expect(oneLineError(busy)).toBe(
        `jobhook: 127.0.0.1:${port} is already in use: pass another --port, or leave --port out for a free one`,
      );
    } finally {
      await new Promise((resolve) => taken.close(resolve));
    }

    // The port is free now: the simulator takes it and serves there.
    child = start(['gateway', '--port', String(port), '--host', '127.0.0.1', '--quiet']);
    let output = '';
    const [baseUrl, key] = await new Promise<[string, string]>((resolve, reject) => {
      child!.stdout!.on('data', (chunk: Buffer) => {
        output += chunk.toString();
        const url = /^GATEWAY_URL=(.+)$/m.exec(output)?.[1];
        const apiKey = /^GATEWAY_API_KEY=(.+)$/m.exec(output)?.[1];
        if (url && apiKey) resolve([url, apiKey]);
      });
      child!.on('exit', (code) => reject(new Error(`jobhook gateway exited (${code}): ${output}`)));
    });
    expect(baseUrl).toBe(`http://127.0.0.1:${port}`);
    const client = createClient({ apiKey: key, baseUrl });
    expect(await client.webhooks.list()).toEqual([]);
    child.kill('SIGTERM');
    expect(((await once(child, 'exit')) as [number | null])[0]).toBe(0);
  });
});
