// File systems of a test's own, for the inbox's failing writes: a tmpfs (a tiny disk that fills up)
// and a read-only bind mount of it. Mounting needs root: without it the test is skipped with one
// line saying why; with CI=true it fails instead (the CI machine runs the suite as root).
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const run = (...args: string[]) => execFileSync(args[0]!, args.slice(1), { stdio: 'pipe' });

/**
 * Mounts a tmpfs of `size` (e.g. `'2m'`) at `dir`, made if absent; whether it did. When it cannot,
 * `test` is skipped with one line, or the run fails with CI=true. Unmount it with {@link unmount}.
 */
export function mountTmpfs(dir: string, size: string, test: string): boolean {
  try {
    mkdirSync(dir, { recursive: true });
    run('mount', '-t', 'tmpfs', '-o', `size=${size}`, 'tmpfs', dir);
    return true;
  } catch (error) {
    const said = (error as { stderr?: Buffer }).stderr?.toString().trim() || String(error);
    const why = `it mounts a tmpfs, which needs root (mount -t tmpfs): ${said.split('\n')[0]}`;
    if (process.env.CI === 'true')
      throw new Error(`${test} must run with CI=true, but ${why}`, { cause: error });
    console.warn(`Skipping ${test}: ${why}`);
    return false;
  }
}

/** Mounts `source` again at `target` (made if absent), read-only: the same files, not writable there. */
export function bindReadOnly(source: string, target: string): void {
  mkdirSync(target, { recursive: true });
  run('mount', '--bind', source, target);
  run('mount', '-o', 'remount,bind,ro', target);
}

/** Makes a read-only bind mount writable again, as a fixed volume would be. */
export function makeWritable(target: string): void {
  run('mount', '-o', 'remount,bind,rw', target);
}

/** Unmounts `dir` lazily: a connection of the test's may still hold a file open there. */
export function unmount(dir: string): void {
  run('umount', '-l', dir);
}

/**
 * A scratch folder (`dir`) with a tmpfs of `size` mounted at `disk` inside it, or undefined (the
 * folder removed) when `test` is skipped; with CI=true a tmpfs that cannot be mounted fails the
 * run. `remove()` unmounts what it mounted and deletes the folder.
 */
export function tmpfsScratch(prefix: string, size: string, test: string) {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  const disk = join(dir, 'disk');
  let mounted = false;
  try {
    mounted = mountTmpfs(disk, size, test);
  } finally {
    if (!mounted) rmSync(dir, { recursive: true, force: true });
  }
  if (!mounted) return undefined;
  return {
    dir,
    disk,
    remove() {
      unmount(disk);
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
