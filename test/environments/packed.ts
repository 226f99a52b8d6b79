/**
 * A scratch project holding the packed package, as a user's app installs it: `npm pack`, the
 * tarball unpacked into node_modules/jobhook, and the packages the app imports besides (zod,
 * jobhook's dependency, hono, and any in `links`) linked from this repository's install, so
 * nothing is fetched.
 */
import { execFile } from 'node:child_process';
import { mkdir, mkdtemp, rename, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { ensureDist, root } from '../support/dist.js';

const run = promisify(execFile);

/** The environment without npm's per-run variables, so a nested npm acts on its own folder. */
const env = Object.fromEntries(Object.entries(process.env).filter(([name]) => !/^npm_/i.test(name)));

/** Creates the scratch project and returns its folder; the caller removes it. */
export async function packedProject(files: Record<string, string>, links: string[] = []): Promise<string> {
  await ensureDist();
  const dir = await mkdtemp(join(tmpdir(), 'jobhook-runtimes-'));
  const { stdout } = await run('npm', ['pack', '--json', '--pack-destination', dir], { cwd: root, env });
  const [{ filename }] = JSON.parse(stdout) as [{ filename: string }];
  const modules = join(dir, 'node_modules');
  await mkdir(modules);
  await run('tar', ['-xzf', join(dir, filename), '-C', modules]);
  await rename(join(modules, 'package'), join(modules, 'jobhook'));
  for (const name of ['zod', 'hono', ...links])
    await symlink(join(root, 'node_modules', name), join(modules, name), 'dir');
  await writeFile(
    join(dir, 'package.json'),
    '{ "name": "runtimes-app", "private": true, "type": "module" }\n',
  );
  for (const [name, text] of Object.entries(files)) await writeFile(join(dir, name), text);
  return dir;
}
