// A user's app prints nothing on stderr on Node 26 (the Active LTS) and on this Node: no
// DeprecationWarning, ExperimentalWarning or other warning of Node's from jobhook's use of it, or
// of better-sqlite3's. The app is the packed package in a scratch project, doing what the README's
// first page does: an Express receiver deduplicating in a SQLite file (jobhook/sqlite, on
// better-sqlite3 built for that Node: native-addons.ts), registered on the gateway simulator, a
// job submitted and waited for, deliveries through the Node and Hono adapters; then the `jobhook`
// command against the simulator.
import { execFile } from 'node:child_process';
import { rm, symlink } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { startGateway } from 'jobhook/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BUILD_TIMEOUT_MS } from '../support/dist.js';
import { packedProject } from './packed.js';
import { betterSqlite3For } from './native-addons.js';
import { findNode } from './node-binaries.js';

const run = promisify(execFile);

/** The bound on a process: there to end a hang, not to time the work (a busy machine is slow). */
const PROCESS_TIMEOUT_MS = 120_000;

const appSource = `
import { once } from 'node:events';
import { existsSync } from 'node:fs';
import { createServer } from 'node:http';
import express from 'express';
import { Hono } from 'hono';
import { createReceiver } from 'jobhook';
import { createClient } from 'jobhook/client';
import { expressHandler, keepRawBody } from 'jobhook/express';
import { honoHandler } from 'jobhook/hono';
import { nodeHandler } from 'jobhook/node';
import { sqliteDedupeStore } from 'jobhook/sqlite';
import { signDelivery, startGateway } from 'jobhook/testing';

const gateway = await startGateway();
const secret = 'whsec_' + Buffer.from('the node warnings test secret 32').toString('base64');
const receiver = createReceiver({ secret, dedupe: sqliteDedupeStore({ path: './jobhook.db' }) })
  .onJobCompleted(() => {})
  .onJobFailed(() => {});
const app = express();
app.post('/webhooks', expressHandler(receiver));
app.post('/parsed', express.json({ verify: keepRawBody }), expressHandler(createReceiver({ secret })));
const server = app.listen(0, '127.0.0.1');
await once(server, 'listening');
const base = 'http://127.0.0.1:' + server.address().port;

const client = createClient({ apiKey: gateway.apiKey, baseUrl: gateway.baseUrl });
await receiver.register({ client, url: base + '/webhooks' });
const task = await client.images.generateAndWait({ model: 'pix-2', prompt: 'a heron' }, { receiver, timeoutMs: 60_000 });

const delivery = signDelivery({ secret, payload: { id: 'evt_1', type: 'job.completed', created_at: new Date().toISOString(),
  data: { task_id: 'task_1', status: 'completed', image_url: 'https://x.test/1.png' } } });
const post = (url) => fetch(url, { method: 'POST', headers: delivery.headers, body: delivery.body }).then((r) => r.status);
const plain = createServer(nodeHandler(createReceiver({ secret })));
plain.listen(0, '127.0.0.1');
await once(plain, 'listening');
const hono = new Hono().post('/webhooks', honoHandler(createReceiver({ secret })));
const statuses = [
  // Into the SQLite file, then a duplicate found there.
  await post(base + '/webhooks'),
  await post(base + '/webhooks'),
  await post(base + '/parsed'),
  await post('http://127.0.0.1:' + plain.address().port + '/'),
  (await hono.fetch(new Request('http://x.test/webhooks', { method: 'POST', headers: delivery.headers, body: delivery.body }))).status,
];

await receiver.close();
server.close();
plain.close();
await gateway.close();
console.log(JSON.stringify({ task: task.status, statuses, sqlite: existsSync('jobhook.db') }));
`;

/** Runs `args` with `node` in `cwd`: its exit code, stdout and stderr, whether it failed or not. */
async function runNode(node: string, args: string[], cwd: string, env: NodeJS.ProcessEnv = process.env) {
  try {
    const { stdout, stderr } = await run(node, args, { cwd, env, timeout: PROCESS_TIMEOUT_MS });
    return { code: 0, stdout, stderr };
  } catch (error) {
    const failed = error as { code: number; stdout: string; stderr: string };
    return { code: failed.code, stdout: failed.stdout, stderr: failed.stderr };
  }
}

const node26 = await findNode(26);
const lines = [
  ...(node26 === undefined ? [] : [{ node: node26, major: 26 }]),
  { node: process.execPath, major: Number(process.versions.node.split('.')[0]) },
].filter((line, at, all) => all.findIndex((other) => other.node === line.node) === at);

/** Each line's scratch project: its better-sqlite3 is built for that line's Node. */
const dirs = new Map<string, string>();
beforeAll(async () => {
  for (const { node, major } of lines) {
    const sqlite = await betterSqlite3For(node, major);
    if (sqlite === undefined) continue;
    const dir = await packedProject({ 'app.mjs': appSource }, ['express']);
    dirs.set(node, dir);
    await symlink(sqlite, join(dir, 'node_modules', 'better-sqlite3'), 'dir');
  }
}, BUILD_TIMEOUT_MS);
afterAll(() => Promise.all([...dirs.values()].map((dir) => rm(dir, { recursive: true, force: true }))));

describe.each(lines)('a user app on $node', ({ node }) => {
  it(
    'receives, registers and waits for a job with nothing on stderr',
    async (context) => {
      const dir = dirs.get(node);
      if (dir === undefined) return context.skip();
      // --trace-warnings: were there a warning, it would come with the stack that caused it.
      const result = await runNode(node, ['--trace-warnings', 'app.mjs'], dir);
      expect(result).toEqual({
        code: 0,
        stdout: `${JSON.stringify({ task: 'completed', statuses: [200, 200, 200, 200, 200], sqlite: true })}\n`,
        stderr: '',
      });
    },
    PROCESS_TIMEOUT_MS,
  );

  it(
    'runs the jobhook command against the simulator with nothing on stderr',
    async (context) => {
      const dir = dirs.get(node);
      if (dir === undefined) return context.skip();
      const gateway = await startGateway();
      try {
        const cli = join(dir, 'node_modules', 'jobhook', 'dist', 'cli.js');
        const env = { ...process.env, GATEWAY_URL: gateway.baseUrl, GATEWAY_API_KEY: gateway.apiKey };
        for (const args of [['secret'], ['webhooks', 'list'], ['generate', 'a heron', '--wait']]) {
          const result = await runNode(node, ['--trace-warnings', cli, ...args], dir, env);
          expect({ args, code: result.code, stderr: result.stderr }).toEqual({ args, code: 0, stderr: '' });
        }
      } finally {
        await gateway.close();
      }
    },
    PROCESS_TIMEOUT_MS,
  );
});
