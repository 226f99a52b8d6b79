// Node binaries of other lines, for the tests that run the built package on them: the
// `node-<os>-<cpu>` package of the npm registry, unpacked once into node_modules/.cache and kept.
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, rename, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { root } from '../support/dist.js';

const run = promisify(execFile);
const cache = join(root, 'node_modules', '.cache', 'jobhook-node-binaries');

/** npm's per-run variables would point a nested npm at this project. */
const env = Object.fromEntries(Object.entries(process.env).filter(([name]) => !/^npm_/i.test(name)));

/**
 * The path of a Node binary of line `major` (this process's own when it is that line), fetched
 * from the registry on first use (40 to 60 MB). Without one (no network, a platform npm has no
 * such package for) the tests that need it are skipped with one line on stderr, except under
 * CI=true, where that is a failure.
 */
export async function findNode(major: number): Promise<string | undefined> {
  if (Number(process.versions.node.split('.')[0]) === major) return process.execPath;
  const name = `node-${process.platform}-${process.arch}@${major}`;
  const folder = join(cache, `${process.platform}-${process.arch}-${major}`);
  const binary = join(folder, 'bin', 'node');
  if (existsSync(binary)) return binary;
  try {
    await mkdir(cache, { recursive: true });
    const scratch = await mkdtemp(join(cache, 'download-'));
    try {
      const { stdout } = await run('npm', ['pack', name, '--json', '--pack-destination', scratch], {
        cwd: scratch,
        env,
        timeout: 300_000,
      });
      const [{ filename }] = JSON.parse(stdout) as [{ filename: string }];
      await run('tar', ['-xzf', join(scratch, filename), '-C', scratch, 'package/bin/node']);
      // Renamed into place whole: a concurrent run sees either no binary or a complete one.
      await rename(join(scratch, 'package'), folder).catch(() => undefined);
    } finally {
      await rm(scratch, { recursive: true, force: true });
    }
  } catch (error) {
    if (process.env.CI === 'true') throw error;
  }
  if (existsSync(binary)) return binary;
  process.stderr.write(
    `skipping the Node ${major} tests: ${name} could not be fetched from the npm registry\n`,
  );
  return undefined;
}
