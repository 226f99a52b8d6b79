// docs/production.md is what users copy into their deployment: its proxy configurations must be
// accepted by the proxies themselves (its TypeScript is compiled by typescript-blocks.test.ts).
import { spawnSync } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { nginxTempPaths, PROXIES, proxyAvailable } from '../support/reverse-proxies.js';
import { codeBlocks } from './code-blocks.js';

const PAGE = 'docs/production.md';
const blocks = await codeBlocks(PAGE);
const blockOf = (lang: string) => {
  const found = blocks.filter((block) => block.lang === lang);
  expect(found, `one ${lang} block in ${PAGE}`).toHaveLength(1);
  return found[0]!.code;
};

/** Runs a proxy's own check of a configuration in a scratch folder; resolves with its exit code and output. */
async function check(
  command: (dir: string) => { file: string; text: string; args: string[]; binary: string },
): Promise<{ status: number | null; output: string }> {
  const dir = await mkdtemp(join(tmpdir(), 'jobhook-docs-proxy-'));
  try {
    const { file, text, args, binary } = command(dir);
    await writeFile(join(dir, file), text);
    // Caddy keeps its state under HOME and the XDG folders: the scratch folder, not the user's.
    const env = { ...process.env, HOME: dir, XDG_CONFIG_HOME: dir, XDG_DATA_HOME: dir };
    const run = spawnSync(binary, args, { cwd: dir, env, encoding: 'utf8', timeout: 30_000 });
    return { status: run.status, output: `${run.stdout}${run.stderr}` };
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

const kind = (binary: string) => PROXIES.find((proxy) => proxy.binary === binary)!;

describe('the proxy configurations', () => {
  it.runIf(proxyAvailable(kind('/usr/sbin/nginx')))('nginx -t accepts the nginx block', async () => {
    const snippet = blockOf('nginx');
    const result = await check((dir) => ({
      binary: '/usr/sbin/nginx',
      file: 'nginx.conf',
      // The page's block is the http context; the rest keeps nginx's files in the scratch folder.
      text: `pid ${dir}/nginx.pid;
error_log ${dir}/error.log;
events {}
http {
  access_log off;
${nginxTempPaths(dir)}
${snippet}
}
`,
      args: ['-t', '-p', dir, '-e', `${dir}/error.log`, '-c', `${dir}/nginx.conf`],
    }));
    expect(result.output).toContain('test is successful');
    expect(result.status).toBe(0);
  });

  it.runIf(proxyAvailable(kind('/usr/bin/caddy')))('caddy validate accepts the Caddyfile block', async () => {
    const result = await check(() => ({
      binary: '/usr/bin/caddy',
      file: 'Caddyfile',
      text: blockOf('caddyfile'),
      args: ['validate', '--config', 'Caddyfile', '--adapter', 'caddyfile'],
    }));
    expect(result.output).toContain('Valid configuration');
    expect(result.status).toBe(0);
  });

  it.runIf(proxyAvailable(kind('/usr/sbin/haproxy')))('haproxy -c accepts the HAProxy block', async () => {
    const result = await check(() => ({
      binary: '/usr/sbin/haproxy',
      file: 'haproxy.cfg',
      text: blockOf('haproxy'),
      args: ['-c', '-f', 'haproxy.cfg'],
    }));
    expect(result.output).toContain('Configuration file is valid');
    expect(result.status).toBe(0);
  });
});
