// Real reverse proxies in front of a test's server: nginx, Caddy and HAProxy, each a process of
// the test's own on a free port, its configuration in a scratch folder (never the system's). Each
// keeps its connections to the server alive, as deployments do. A proxy whose binary is missing is
// skipped with one line; with CI=true it fails the run instead (the CI machine has all three).
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { existsSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { connect } from 'node:net';
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
  /** The configuration file's name and text, and the command that runs the proxy in the foreground. */
  setup(
    upstream: number,
    port: number,
    dir: string,
  ): { file: string; text: string; args: string[]; env?: Record<string, string> };
}

const nginx = (buffering: boolean): ProxyKind => ({
  name: buffering ? 'nginx (request buffering on, the default)' : 'nginx (proxy_request_buffering off)',
  binary: '/usr/sbin/nginx',
  setup: (upstream, port, dir) => ({
    file: 'nginx.conf',
    text: `
user ${userInfo().username};
worker_processes 1;
pid ${dir}/nginx.pid;
error_log ${dir}/error.log warn;
events { worker_connections 256; }
http {
  access_log off;
  client_body_temp_path ${dir}/client_body;
  proxy_temp_path ${dir}/proxy;
  fastcgi_temp_path ${dir}/fastcgi;
  uwsgi_temp_path ${dir}/uwsgi;
  scgi_temp_path ${dir}/scgi;
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
  setup: (upstream, port, dir) => ({
    file: 'Caddyfile',
    text: `
{
  admin off
  auto_https off
  storage file_system ${dir}/data
}
http://127.0.0.1:${port} {
  bind 127.0.0.1
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
  setup: (upstream, port, dir) => ({
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

/** Starts `kind` on a free port in front of 127.0.0.1:`upstream`; resolves once it accepts connections. */
export async function startProxy(kind: ProxyKind, upstream: number): Promise<ReverseProxy> {
  const dir = await mkdtemp(join(tmpdir(), 'jobhook-proxy-'));
  const port = await freePort();
  const { file, text, args, env } = kind.setup(upstream, port, dir);
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
    await listening(port, child);
  } catch (error) {
    await stop();
    throw new Error(`${kind.name} did not start: ${(error as Error).message}\n${output}`, { cause: error });
  }
  return { origin: `http://127.0.0.1:${port}`, stop };
}

/** Resolves once something accepts connections on `port`; rejects if `child` exits first or after 10 s. */
async function listening(port: number, child: ChildProcess): Promise<void> {
  const deadline = Date.now() + 10_000;
  while (Date.now() < deadline) {
    if (child.exitCode !== null) throw new Error(`exited with code ${child.exitCode}`);
    const accepted = await new Promise<boolean>((resolve) => {
      const socket = connect(port, '127.0.0.1');
      socket.once('connect', () => {
        socket.destroy();
        resolve(true);
      });
      socket.once('error', () => resolve(false));
    });
    if (accepted) return;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error('not listening after 10 s');
}
