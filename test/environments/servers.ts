/** Starts the app on each runtime, listening on 127.0.0.1; each returns its base URL and a stop. */
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { EdgeRuntime, runServer } from 'edge-runtime';
import { Miniflare } from 'miniflare';
import { root } from '../support/dist.js';

export interface Served {
  url: string;
  stop(): Promise<void>;
}

/** workerd through Miniflare: an ES module Worker, no compatibility flags (so no nodejs_compat). */
export async function serveWorkerd(script: string): Promise<Served> {
  const miniflare = new Miniflare({
    modules: true,
    script,
    compatibilityDate: '2025-09-01',
    compatibilityFlags: [],
    cf: false, // no fetch of cf.json from the network
    host: '127.0.0.1',
    port: 0,
  });
  const url = await miniflare.ready;
  return { url: url.origin, stop: () => miniflare.dispose() };
}

/** Vercel's Edge Runtime (the `edge-runtime` package): the script listens for `fetch` events. */
export async function serveEdge(script: string): Promise<Served> {
  const runtime = new EdgeRuntime({ initialCode: script });
  const server = await runServer({ runtime, host: '127.0.0.1', port: 0 });
  return { url: server.url.replace(/\/$/, ''), stop: () => server.close() };
}

const bin = (name: string) => join(root, 'node_modules', '.bin', name);

/** Deno, allowed to read only the project (and the linked packages) and to listen on 127.0.0.1. */
export function serveDeno(dir: string, script: string): Promise<Served> {
  // The scratch project, and the real folders of the packages it links.
  const readable = [dir, ...['zod', 'hono'].map((name) => join(root, 'node_modules', name))];
  return serveProcess(
    bin('deno'),
    [
      'run',
      '--no-remote',
      '--no-prompt',
      '--allow-net=127.0.0.1',
      `--allow-read=${readable.join(',')}`,
      script,
    ],
    dir,
    { DENO_NO_UPDATE_CHECK: '1', DENO_DIR: join(dir, '.deno') },
  );
}

/** Bun, running the server script as it is. */
export function serveBun(dir: string, script: string): Promise<Served> {
  return serveProcess(bin('bun'), [script], dir, { DO_NOT_TRACK: '1' });
}

/** Spawns a server that prints `listening <port>` once ready. */
function serveProcess(
  command: string,
  args: string[],
  cwd: string,
  env: Record<string, string>,
): Promise<Served> {
  const child = spawn(command, args, {
    cwd,
    env: { PATH: process.env.PATH, HOME: process.env.HOME, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  return new Promise<Served>((resolve, reject) => {
    const timer = setTimeout(() => fail('did not start within 20 s'), 20_000);
    function fail(why: string) {
      clearTimeout(timer);
      child.kill();
      reject(new Error(`${command} ${why}:\n${output}`));
    }
    child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.stdout.on('data', (chunk: Buffer) => {
      output += chunk.toString();
      const port = /listening (\d+)/.exec(output)?.[1];
      if (port === undefined) return;
      clearTimeout(timer);
      resolve({
        url: `http://127.0.0.1:${port}`,
        stop: async () => {
          child.kill();
          await exited;
        },
      });
    });
    child.once('exit', (code) => fail(`exited with ${code}`));
  });
}
