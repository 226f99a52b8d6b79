// A Node 18 binary, for the test that the package refuses to load on it: the `node-<os>-<cpu>`
// package from the npm registry, unpacked once into node_modules/.cache and kept there.
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, rename, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { root } from '../support/dist.js';

const run = promisify(execFile);
const NODE_18 = `node-${process.platform}-${process.arch}@18`;
const cache = join(root, 'node_modules', '.cache', 'jobhook-old-node');
const binary = join(cache, `${process.platform}-${process.arch}-18`, 'bin', 'node');

/** npm's per-run variables would point a nested npm at this project. */
const env = Object.fromEntries(Object.entries(process.env).filter(([name]) => !/^npm_/i.test(name)));

/**
 * The path of a Node 18 binary, fetched from the registry on first use (about 40 MB). Without
 * one (no network, a platform npm has no such package for) the tests that need it are skipped
 * with one line on stderr, except under CI=true, where that is a failure.
 */
export async function findNode18(): Promise<string | undefined> {
  if (existsSync(binary)) return binary;
  try {
    await mkdir(cache, { recursive: true });
    const scratch = await mkdtemp(join(cache, 'download-'));
    try {
      const { stdout } = await run('npm', ['pack', NODE_18, '--json', '--pack-destination', scratch], {
        cwd: scratch,
        env,
        timeout: 300_000,
      });
      const [{ filename }] = JSON.parse(stdout) as [{ filename: string }];
      await run('tar', ['-xzf', join(scratch, filename), '-C', scratch, 'package/bin/node']);
      // Renamed into place whole: a concurrent run sees either no binary or a complete one.
      await rename(join(scratch, 'package'), join(cache, `${process.platform}-${process.arch}-18`)).catch(
        () => undefined,
      );
    } finally {
      await rm(scratch, { recursive: true, force: true });
    }
  } catch (error) {
    if (process.env.CI === 'true') throw error;
  }
  if (existsSync(binary)) return binary;
  process.stderr.write(`skipping the Node 18 tests: ${NODE_18} could not be fetched from the npm registry\n`);
  return undefined;
}
