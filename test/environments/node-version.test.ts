// On a Node older than the supported 20.19, jobhook fails when it loads, with one clear message,
// rather than loading and then answering every delivery 500 (Node 18 has no global `crypto`).
// The built package is loaded by a real Node 18 (node-binaries.ts fetches one); the check itself is
// also run here against the versions other runtimes report.
import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { beforeAll, describe, expect, it } from 'vitest';
import { requireSupportedNode } from '../../src/runtime/node-version.js';
import { BUILD_TIMEOUT_MS, dist, ensureDist } from '../support/dist.js';
import { findNode } from './node-binaries.js';

const run = promisify(execFile);
const node18 = await findNode(18);

/** Loads `code` (which imports the built package) with `node`; its exit code and stderr. */
async function load(node: string, code: string, type: 'module' | 'commonjs') {
  try {
    const { stdout } = await run(node, [`--input-type=${type}`, '-e', code], { timeout: 60_000 });
    return { code: 0, stdout, stderr: '' };
  } catch (error) {
    const failed = error as { code: number; stdout: string; stderr: string };
    return { code: failed.code, stdout: failed.stdout, stderr: failed.stderr };
  }
}

const entries = [
  [
    'jobhook (ESM)',
    `await import(${JSON.stringify(join(dist, 'index.js'))}); console.log('loaded');`,
    'module',
  ],
  [
    'jobhook (CommonJS)',
    `require(${JSON.stringify(join(dist, 'index.cjs'))}); console.log('loaded');`,
    'commonjs',
  ],
  [
    'jobhook/client',
    `await import(${JSON.stringify(join(dist, 'client.js'))}); console.log('loaded');`,
    'module',
  ],
  [
    'jobhook/testing',
    `await import(${JSON.stringify(join(dist, 'testing.js'))}); console.log('loaded');`,
    'module',
  ],
] as const;

describe.skipIf(!node18)('the built package on Node 18', () => {
  beforeAll(ensureDist, BUILD_TIMEOUT_MS);

  it.each(entries)('%s fails to load with one clear message', async (_name, code, type) => {
    const result = await load(node18!, code, type);
    expect(result.code).not.toBe(0);
    expect(result.stdout).not.toContain('loaded');
    expect(result.stderr).toMatch(/Error: jobhook needs Node 20\.19 or later \(this is 18\.\d+\.\d+\)\./);
  });

  it.each(entries)('%s loads on this Node', async (_name, code, type) => {
    expect(await load(process.execPath, code, type)).toMatchObject({ code: 0, stdout: 'loaded\n' });
  });
});

describe('requireSupportedNode', () => {
  const node = (version: string, extra: Record<string, string> = {}) => ({
    versions: { node: version, ...extra },
    release: { name: 'node' },
  });

  it('refuses Node below 20.19, naming the version', () => {
    for (const version of ['18.20.8', '20.18.3', '16.0.0', '19.9.0']) {
      expect(() => requireSupportedNode(node(version))).toThrow(
        `jobhook needs Node 20.19 or later (this is ${version}).`,
      );
    }
  });

  it('accepts 20.19 and later, Deno and Bun whatever they report, and runtimes that are not Node', () => {
    for (const version of ['20.19.0', '20.20.2', '21.0.0', '22.1.0', '24.11.1']) {
      expect(() => requireSupportedNode(node(version))).not.toThrow();
    }
    expect(() => requireSupportedNode(node('18.0.0', { bun: '1.1.0' }))).not.toThrow();
    expect(() => requireSupportedNode(node('18.0.0', { deno: '1.40.0' }))).not.toThrow();
    expect(() => requireSupportedNode({ versions: { node: '18.0.0' } })).not.toThrow();
    expect(() => requireSupportedNode(undefined)).not.toThrow();
  });
});
