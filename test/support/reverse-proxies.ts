// Real reverse proxies in front of a test's server: nginx, Caddy and HAProxy, each a process of
// the test's own on a free port, its configuration in a scratch folder (never the system's). Each
// keeps its connections to the server alive, as deployments do. A proxy whose binary is missing is
// skipped with one line; with CI=true it fails the run instead (the CI machine has all three).
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { existsSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { randomBytes } from 'node:crypto';
import { get } from 'node:http';
import { tmpdir, userInfo } from 'node:os';
import { join } from 'node:path';
import { freePort } from './services.js';

export interface ReverseProxy {
  /** `http://127.0.0.1:<port>` of the proxy. */
  origin: string;
  /** Stops the proxy and removes its scratch folder. */
  stop(): Promise<void>;
}

/**
 * Idle connections to the server are dropped by the proxy after this long, before Node's own
 * keep-alive time-out (5 s) closes them: a proxy that reuses a connection the server is closing
 * at that moment gets a reset that has nothing to do with what a test looks at.
 */
const PROXY_IDLE_SECONDS = 2;

export interface ProxyKind {
  name: string;
  binary: string;
  /**
   * The configuration file's name and text, and the command that runs the proxy in the foreground;
   * every answer through it carries `x-jobhook-proxy: <tag>`, which tells it from another listener.
   */
  setup(
    upstream: number,
    port: number,
    dir: string,
    tag: string,
  ): { file: string; text: string; args: string[]; env?: Record<string, string> };
}

/** nginx's temporary folders, inside `dir`: the defaults are system folders a test may not write. */
export const nginxTempPaths = (dir: string) =>
  ['client_body', 'proxy', 'fastcgi', 'uwsgi', 'scgi']
    .map((kind) => `  ${kind}_temp_path ${dir}/${kind};`)
    .join('\n');

const nginx = (buffering: boolean): ProxyKind => ({
  name: buffering ? 'nginx (request buffering on, the default)' : 'nginx (proxy_request_buffering off)',
  binary: '/usr/sbin/nginx',
  setup: (upstream, port, dir, tag) => ({
    file: 'nginx.conf',
    text: `
user ${userInfo().username};
worker_processes 1;
pid ${dir}/nginx.pid;
error_log ${dir}/error.log warn;
events { worker_connections 256; }
http {
  access_log off;
${nginxTempPaths(dir)}
  upstream receiver {
    server 127.0.0.1:${upstream};
    keepalive 8;
    keepalive_timeout ${PROXY_IDLE_SECONDS}s;
  }
  server {
    listen 127.0.0.1:${port};
    client_max_body_size 16m;
    location / {
      proxy_pass http://receiver;
      proxy_http_version 1.1;
      proxy_set_header Connection "";
      proxy_request_buffering ${buffering ? 'on' : 'off'};
      add_header x-jobhook-proxy ${tag} always;
    }
  }
}
`,
    args: ['-p', dir, '-e', `${dir}/error.log`, '-c', `${dir}/nginx.conf`, '-g', 'daemon off;'],
  }),
});

const caddy: ProxyKind = {
  name: 'Caddy',
  binary: '/usr/bin/caddy',
  setup: (upstream, port, dir, tag) => ({
    file: 'Caddyfile',
    text: `
{
  admin off
  auto_https off
  storage file_system ${dir}/data
}
http://127.0.0.1:${port} {
  bind 127.0.0.1
  header x-jobhook-proxy ${tag}
  reverse_proxy 127.0.0.1:${upstream} {
    transport http {
      keepalive ${PROXY_IDLE_SECONDS}s
    }
  }
}
`,
    args: ['run', '--config', `${dir}/Caddyfile`, '--adapter', 'caddyfile'],
    // Caddy keeps its state under HOME and the XDG folders: the scratch folder, not the user's.
    env: { HOME: dir, XDG_CONFIG_HOME: dir, XDG_DATA_HOME: dir },
  }),
};

const haproxy: ProxyKind = {
  name: 'HAProxy',
  binary: '/usr/sbin/haproxy',
  setup: (upstream, port, dir, tag) => ({
    file: 'haproxy.cfg',
    text: `
global
  maxconn 256
defaults
  mode http
  timeout connect 5s
  timeout client 30s
  timeout server 30s
  timeout http-keep-alive ${PROXY_IDLE_SECONDS}s
  http-reuse always
frontend in
  bind 127.0.0.1:${port}
  http-response set-header x-jobhook-proxy ${tag}
  default_backend receiver
backend receiver
  server receiver 127.0.0.1:${upstream} pool-purge-delay ${PROXY_IDLE_SECONDS}s
`,
    args: ['-f', `${dir}/haproxy.cfg`, '-db'],
  }),
};

/** Every proxy the suites run behind; `name` says how it is configured. */
export const PROXIES: ProxyKind[] = [nginx(true), nginx(false), caddy, haproxy];

/** Whether `kind`'s binary is installed (throws instead when CI=true). Use with `describe.runIf`. */
export function proxyAvailable(kind: ProxyKind): boolean {
  if (existsSync(kind.binary)) return true;
  if (process.env.CI === 'true')
    throw new Error(`${kind.binary} is needed with CI=true, but it is not installed`);
  console.warn(`Skipping the tests behind ${kind.name}: ${kind.binary} is not installed`);
  return false;
}

/**
 * Starts `kind` on a free port in front of 127.0.0.1:`upstream`; resolves once it answers as
 * itself. A port taken by another listener between freePort() and the proxy's bind is tried again.
 */
export async function startProxy(kind: ProxyKind, upstream: number): Promise<ReverseProxy> {
  let failure: unknown;
  for (let attempt = 0; attempt < 3; attempt++) {
    try {
      return await startOnce(kind, upstream);
    } catch (error) {
      failure = error;
    }
  }
  throw failure;
}

async function startOnce(kind: ProxyKind, upstream: number): Promise<ReverseProxy> {
  const dir = await mkdtemp(join(tmpdir(), 'jobhook-proxy-'));
  const port = await freePort();
  const tag = randomBytes(8).toString('hex');
  const { file, text, args, env } = kind.setup(upstream, port, dir, tag);
  await writeFile(join(dir, file), text);
  const child = spawn(kind.binary, args, {
    cwd: dir,
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  const keep = (data: Buffer) => void (output = (output + data.toString()).slice(-4000));
  child.stdout.on('data', keep);
  child.stderr.on('data', keep);
  const stop = async () => {
    if (child.exitCode === null && child.signalCode === null) {
      const exited = once(child, 'exit');
      child.kill('SIGTERM');
      await exited;
    }
    await rm(dir, { recursive: true, force: true });
  };
  try {
    await answering(port, tag, child);
  } catch (error) {
    await stop();
    throw new Error(`${kind.name} did not start: ${(error as Error).message}\n${output}`, { cause: error });
  }
  return { origin: `http://127.0.0.1:${port}`, stop };
}

/**
 * Resolves once a GET on `port` is answered with the proxy's tag; rejects when `child` exits, when
 * another listener answers, or after 10 s.
 */
async function answering(port: number, tag: string, child: ChildProcess): Promise<void> {
  const deadline = Date.now() + 10_000;
  while (Date.now() < deadline) {
    if (child.exitCode !== null) throw new Error(`exited with code ${child.exitCode}`);
    const answeredTag = await new Promise<string | undefined | null>((resolve) => {
      const req = get({ host: '127.0.0.1', port, path: '/', agent: false, timeout: 1000 }, (res) => {
        res.resume();
        resolve(String(res.headers['x-jobhook-proxy']));
      });
      req.on('timeout', () => req.destroy());
      req.on('error', () => resolve(null));
    });
    if (answeredTag === tag) return;
    if (answeredTag !== null) throw new Error(`port ${port} is answered by another listener`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error('not answering after 10 s');
}
