/**
 * The CPU a refused POST costs a receiver that serves 1 or 10,000 tenants on one route
 * (`/webhooks/:tenant`, the secrets picked by a `secret` function), over HTTP through the Node
 * adapter: garbage (no signature headers), and a well-formed delivery signed with a wrong secret
 * (it passes the header checks, so its tenant's secrets are looked up, prepared and learnt by the
 * redaction). Every tenant is first sent one such delivery, so the 10,000 are all known. From the
 * repository's root:
 *
 *   npm run build && npx esbuild bench/tenant-refusals.ts --outfile=node_modules/.cache/tenants.mjs \
 *     --platform=node --format=esm --log-level=warning && node node_modules/.cache/tenants.mjs
 *
 * The receiver runs in a child process, which reports its own CPU time (user + system): printed
 * per refused request, the median of 7 rounds of 500, for 1 and 10,000 tenants, twice each.
 */
import { createHmac } from 'node:crypto';
import { createServer, request, Agent } from 'node:http';
import type { AddressInfo } from 'node:net';
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import type * as Jobhook from 'jobhook';
import type * as JobhookNode from 'jobhook/node';

const load = async <T>(file: string) => (await import(pathToFileURL(resolve('dist', file)).href)) as T;
const { createReceiver } = await load<typeof Jobhook>('index.js');
const { nodeHandler } = await load<typeof JobhookNode>('node.js');

const secretOf = (tenant: string) =>
  `whsec_${Buffer.from(`tenant-secret-${tenant}-0123456789`).toString('base64')}`;
const wrongKey = Buffer.from('a-stranger-who-has-no-secret-0123');
const body = JSON.stringify({
  id: 'evt_1',
  type: 'job.completed',
  data: { task_id: 't', status: 'completed' },
});
const agent = new Agent({ keepAlive: true, maxSockets: 8 });

function post(port: number, path: string, headers: Record<string, string>): Promise<number> {
  return new Promise((done, fail) => {
    const req = request({ port, host: '127.0.0.1', path, method: 'POST', agent, headers }, (res) => {
      res.resume();
      res.on('end', () => done(res.statusCode!));
    });
    req.on('error', fail);
    req.end(body);
  });
}

function wronglySigned(): Record<string, string> {
  const id = `msg_${Math.random().toString(36).slice(2)}`;
  const timestamp = String(Math.floor(Date.now() / 1000));
  const signature = createHmac('sha256', wrongKey).update(`${id}.${timestamp}.${body}`).digest('base64');
  return { 'webhook-id': id, 'webhook-timestamp': timestamp, 'webhook-signature': `v1,${signature}` };
}

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;

/** The server side: a receiver for `tenants` tenants in a child process, which reports its own CPU. */
if (process.argv[2] === 'server') {
  const receiver = createReceiver({
    secret: ({ url }) => secretOf(new URL(url!).pathname.split('/')[2]!),
    logger: { error: () => undefined, warn: () => undefined },
  });
  const server = createServer(nodeHandler(receiver));
  server.listen(0, '127.0.0.1', () => process.send!({ port: (server.address() as AddressInfo).port }));
  process.on('message', (message: string) => {
    if (message === 'cpu') process.send!({ cpu: process.cpuUsage() });
    else process.exit(0);
  });
} else {
  const { fork } = await import('node:child_process');
  for (const tenants of [1, 10_000, 1, 10_000]) {
    const child = fork(process.argv[1]!, ['server']);
    const ask = <T>(message?: string) =>
      new Promise<T>((answer) => {
        child.once('message', (reply) => answer(reply as T));
        if (message) child.send(message);
      });
    const { port } = await ask<{ port: number }>();
    // Every tenant is seen once, then the same warm-up for both sizes (the JIT's, not the tenants').
    for (let n = 0; n < tenants; n++) await post(port, `/webhooks/t${n}`, wronglySigned());
    for (let n = 0; n < 5_000; n++)
      await post(port, `/webhooks/t${n % tenants}`, n % 2 ? {} : wronglySigned());
    const line: string[] = [];
    for (const [kind, headers] of [
      ['garbage', () => ({})],
      ['wrong secret', wronglySigned],
    ] as const) {
      const rounds: number[] = [];
      for (let round = 0; round < 7; round++) {
        const before = (await ask<{ cpu: NodeJS.CpuUsage }>('cpu')).cpu;
        const count = 500;
        for (let n = 0; n < count; n++) {
          const status = await post(port, `/webhooks/t${n % tenants}`, headers());
          if (status !== 401) throw new Error(`expected 401, got ${status}`);
        }
        const after = (await ask<{ cpu: NodeJS.CpuUsage }>('cpu')).cpu;
        rounds.push((after.user - before.user + after.system - before.system) / count);
      }
      line.push(`${kind} ${median(rounds).toFixed(0)} µs`);
    }
    console.log(`${String(tenants).padStart(6)} tenants: server CPU per refused POST: ${line.join(', ')}`);
    child.send('exit');
  }
  agent.destroy();
}
