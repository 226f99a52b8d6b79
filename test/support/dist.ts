/**
 * Tests that run the built package (the CLI binary, the packed tarball) call `ensureDist()` first:
 * it builds dist/ when a file is missing or older than a source, so `npm test` works on a clean
 * clone without relying on `npm run check` having run before. Test files run in parallel workers
 * (and other test runs may share the work tree), so one build at a time holds a lock directory, and
 * the build goes to a scratch folder that replaces dist/ only when complete.
 */
import { execFile } from 'node:child_process';
import { mkdir, readFile, readdir, rename, rm, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';

export const root = fileURLToPath(new URL('../..', import.meta.url));
export const dist = join(root, 'dist');
export const cli = join(dist, 'cli.js');

/** The built name of every public entry point (`index` is `jobhook` itself). */
export const entryNames = [
  'index',
  'extend',
  'express',
  'hono',
  'node',
  'fastify',
  'koa',
  'client',
  'testing',
  'redis',
  'postgres',
  'sqlite',
  'bullmq',
  'pg-boss',
  'nats',
  'otel',
];

const outputs = [
  ...entryNames.flatMap((name) => ['.js', '.cjs', '.d.ts', '.d.cts'].map((ext) => `${name}${ext}`)),
  // `jobhook/testing` on Workers, Edge and browsers, and the two forms of `#runtime`.
  'testing-web.js',
  'testing-web.d.ts',
  ...['runtime-node', 'runtime-web'].flatMap((name) => [`${name}.js`, `${name}.cjs`]),
];
const inputs = ['src', 'adapters', 'tsup.config.ts', 'package.json', 'tsconfig.json', 'tsconfig.build.json'];
const cache = join(root, 'node_modules', '.cache');
const lock = join(cache, 'jobhook-build.lock');

/**
 * The bound on a hook that calls {@link ensureDist}: a build takes about half a minute on an idle
 * machine and many times that on a busy one, possibly after another process's build.
 */
export const BUILD_TIMEOUT_MS = 600_000;

/** A lock whose holder died between taking it and writing its pid; the gap is one system call. */
const ORPHAN_LOCK_MS = 60_000;

/** Builds dist/ unless it is complete and newer than every source; a hook gives it {@link BUILD_TIMEOUT_MS}. */
export async function ensureDist(): Promise<void> {
  for (;;) {
    if (await fresh()) return;
    if (await acquire()) break;
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  try {
    if (await fresh()) return;
    const scratch = join(cache, `jobhook-dist-${process.pid}`);
    await rm(scratch, { recursive: true, force: true });
    await promisify(execFile)(join(root, 'node_modules', '.bin', 'tsup'), ['--out-dir', scratch], {
      cwd: root,
    });
    const old = join(cache, `jobhook-dist-old-${process.pid}`);
    await rename(dist, old).catch(() => undefined);
    await rename(scratch, dist);
    await rm(old, { recursive: true, force: true });
  } finally {
    await rm(lock, { recursive: true, force: true });
  }
}

async function fresh(): Promise<boolean> {
  const built = await Promise.all([...outputs, 'cli.js'].map((file) => mtime(join(dist, file))));
  if (built.some((time) => time === undefined)) return false;
  const oldest = Math.min(...(built as number[]));
  let newest = 0;
  for (const input of inputs) newest = Math.max(newest, await newestIn(join(root, input)));
  return newest <= oldest;
}

/**
 * mkdir is atomic: whoever creates the directory holds the lock, and writes its pid in it. The lock
 * is stale once that process has ended, however long a build takes on a busy machine (an age limit
 * let a second build start beside a slow first one, and each ran slower still).
 */
async function acquire(): Promise<boolean> {
  await mkdir(cache, { recursive: true });
  try {
    await mkdir(lock);
    await writeFile(join(lock, 'pid'), String(process.pid));
    return true;
  } catch {
    if (await stale()) await rm(lock, { recursive: true, force: true });
    return false;
  }
}

/** Whether the lock's holder has ended; a lock with no pid yet is being taken, unless it is old. */
async function stale(): Promise<boolean> {
  const pid = Number(await readFile(join(lock, 'pid'), 'utf8').catch(() => ''));
  if (!pid) {
    const since = await mtime(lock);
    return since !== undefined && Date.now() - since > ORPHAN_LOCK_MS;
  }
  try {
    process.kill(pid, 0);
    return false;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'ESRCH';
  }
}

async function mtime(path: string): Promise<number | undefined> {
  try {
    return (await stat(path)).mtimeMs;
  } catch {
    return undefined;
  }
}

async function newestIn(path: string): Promise<number> {
  const info = await stat(path).catch(() => undefined);
  if (!info) return 0;
  if (!info.isDirectory()) return info.mtimeMs;
  let newest = 0;
  for (const entry of await readdir(path)) newest = Math.max(newest, await newestIn(join(path, entry)));
  return newest;
}
