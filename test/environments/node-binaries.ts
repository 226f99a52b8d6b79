// Node binaries of other lines, for the tests that run the built package on them: the
// `node-<os>-<cpu>` package of the npm registry, unpacked once into node_modules/.cache and kept;
// its headers (include/node, 67 MB), which a native addon is built against, when one is.
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
  const folder = nodeFolder(major);
  const binary = join(folder, 'bin', 'node');
  if (!existsSync(binary)) await unpack(packageOf(major), folder, ['package/bin/node']);
  if (existsSync(binary)) return binary;
  process.stderr.write(
    `skipping the Node ${major} tests: ${packageOf(major)} could not be fetched from the npm registry\n`,
  );
  return undefined;
}

/**
 * The folder of another line's package, with `bin/node` and the headers (`include/node`, unpacked
 * beside the binary on first use): what `npm_config_nodedir` names to build an addon for that
 * line. `undefined`, as for {@link findNode}, without one.
 */
export async function nodeHome(major: number): Promise<string | undefined> {
  const binary = await findNode(major);
  if (binary === undefined) return undefined;
  const folder = nodeFolder(major);
  if (!existsSync(join(folder, 'include', 'node', 'node_version.h'))) {
    // The headers of the very version unpacked, not of a later one published since.
    const version = (await run(binary, ['--version'])).stdout.trim().replace(/^v/, '');
    await unpack(`${packageName}@${version}`, folder, ['package/include']);
  }
  return existsSync(join(folder, 'include', 'node', 'node_version.h')) ? folder : undefined;
}

const packageName = `node-${process.platform}-${process.arch}`;
const packageOf = (major: number) => `${packageName}@${major}`;
const nodeFolder = (major: number) => join(cache, `${process.platform}-${process.arch}-${major}`);

/** Unpacks `entries` of the package `spec` into `folder`, each moved into place whole: a concurrent run sees all of it or none. */
async function unpack(spec: string, folder: string, entries: string[]): Promise<void> {
  try {
    await mkdir(cache, { recursive: true });
    const scratch = await mkdtemp(join(cache, 'download-'));
    try {
      const { stdout } = await run('npm', ['pack', spec, '--json', '--pack-destination', scratch], {
        cwd: scratch,
        env,
        timeout: 300_000,
      });
      const [{ filename }] = JSON.parse(stdout) as [{ filename: string }];
      await run('tar', ['-xzf', join(scratch, filename), '-C', scratch, ...entries]);
      if (!existsSync(folder)) await rename(join(scratch, 'package'), folder).catch(() => undefined);
      else {
        for (const entry of entries) {
          const name = entry.slice('package/'.length);
          if (!existsSync(join(folder, name)))
            await rename(join(scratch, entry), join(folder, name)).catch(() => undefined);
        }
      }
    } finally {
      await rm(scratch, { recursive: true, force: true });
    }
  } catch (error) {
    if (process.env.CI === 'true') throw error;
  }
}
