// better-sqlite3 for a Node of another line. Its addon is built for one ABI: node_modules holds the
// build for the Node that runs the suite (.ci/native-addons fits it to each line CI runs a suite
// on), so an app run here on another line gets a copy of the package with an addon of its own:
// kept in node_modules/.cache, taken from .ci/native-addons' cache when that has one, else
// compiled once from the package's sources against that line's headers, as .ci/native-addons does
// (never a prebuilt binary from outside the registry).
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { copyFile, cp, mkdir, mkdtemp, readFile, rename, rm } from 'node:fs/promises';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { root } from '../support/dist.js';
import { nodeHome } from './node-binaries.js';

const run = promisify(execFile);
const installed = join(root, 'node_modules', 'better-sqlite3');
const cache = join(root, 'node_modules', '.cache', 'jobhook-native-addons');
/** Where .ci/native-addons keeps each addon it built, by package version and ABI. */
const ciCache =
  process.env.JOBHOOK_CI_ADDON_CACHE ??
  join(process.env.XDG_CACHE_HOME ?? join(homedir(), '.cache'), 'jobhook-ci', 'addons');

/** npm's per-run variables would point a nested npm at this project. */
const env = Object.fromEntries(Object.entries(process.env).filter(([name]) => !/^npm_/i.test(name)));

/**
 * The folder of a better-sqlite3 package whose addon fits `node` (a Node of line `major`): the
 * installed one for this process's ABI, else a copy built for that line. Without one (no
 * headers, no compiler) `undefined`, with one line on stderr, except under CI=true, where that
 * is a failure. A first build takes minutes: call it from a hook bounded by BUILD_TIMEOUT_MS.
 */
export async function betterSqlite3For(node: string, major: number): Promise<string | undefined> {
  const abi = (await run(node, ['-p', 'process.versions.modules'])).stdout.trim();
  if (abi === process.versions.modules) return installed;
  const { version } = JSON.parse(await readFile(join(installed, 'package.json'), 'utf8')) as {
    version: string;
  };
  const folder = join(cache, `better-sqlite3@${version}-abi-${abi}`);
  const addon = join('build', 'Release', 'better_sqlite3.node');
  if (existsSync(join(folder, addon))) return folder;
  try {
    await mkdir(cache, { recursive: true });
    const scratch = await mkdtemp(join(cache, 'build-'));
    try {
      const copy = join(scratch, 'better-sqlite3');
      const built = join(ciCache, `better-sqlite3@${version}`, `abi-${abi}`, 'node_modules+better-sqlite3');
      /** The installed package without `parts` (its build is for this process's Node). */
      const copyWithout = (parts: string[]) =>
        cp(installed, copy, {
          recursive: true,
          filter: (path) => !parts.some((part) => path.startsWith(join(installed, part))),
        });
      if (existsSync(join(built, 'better_sqlite3.node'))) {
        await copyWithout(['build', 'deps', 'src']);
        await mkdir(join(copy, 'build', 'Release'), { recursive: true });
        await copyFile(join(built, 'better_sqlite3.node'), join(copy, addon));
      } else {
        const home = await nodeHome(major);
        if (home === undefined) throw new Error(`no headers of Node ${major}`);
        await copyWithout(['build']);
        // The package's own build script (node-gyp, which npm provides), against that line's headers.
        await run('npm', ['run', 'build-release'], {
          cwd: copy,
          env: { ...env, PATH: `${join(home, 'bin')}:${env.PATH ?? ''}`, npm_config_nodedir: home },
          timeout: 900_000,
          maxBuffer: 64 * 1024 * 1024,
        });
        // What the package needs at run time: its JavaScript and the addon, not the sources and objects.
        for (const name of ['deps', 'src']) await rm(join(copy, name), { recursive: true, force: true });
        for (const name of ['obj', 'obj.target', '.deps', 'sqlite3.a'])
          await rm(join(copy, 'build', 'Release', name), { recursive: true, force: true });
      }
      const loads = await run(node, ['-e', `require(${JSON.stringify(copy)})(':memory:').close()`]);
      if (loads.stderr !== '') throw new Error(`the addon built for Node ${major} says: ${loads.stderr}`);
      // Moved into place whole: a concurrent run sees a complete package or none.
      await rename(copy, folder).catch(() => undefined);
    } finally {
      await rm(scratch, { recursive: true, force: true });
    }
  } catch (error) {
    if (process.env.CI === 'true') throw error;
    process.stderr.write(
      `skipping the better-sqlite3 part on Node ${major}: no addon built for it (${String(error)})\n`,
    );
    return undefined;
  }
  return existsSync(join(folder, addon)) ? folder : undefined;
}
