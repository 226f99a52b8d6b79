/**
 * Bundles the app the way each platform's tooling does before it runs: wrangler for Workers
 * (esbuild, conditions `workerd`, `worker`, `browser`) and Next.js for the Edge Runtime
 * (conditions `edge-light`, `worker`, `browser`), neither with a Node platform nor Node built-ins.
 */
import { build } from 'esbuild';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';

/** Bundles `entry` (in `dir`) to `outfile` and returns the bundled text. */
export async function bundle(
  dir: string,
  entry: string,
  outfile: string,
  options: { conditions: string[]; format: 'esm' | 'iife'; minify?: boolean },
): Promise<string> {
  const result = await build({
    absWorkingDir: dir,
    entryPoints: [join(dir, entry)],
    outfile: join(dir, outfile),
    bundle: true,
    write: true,
    platform: 'neutral',
    mainFields: ['browser', 'module', 'main'],
    conditions: options.conditions,
    format: options.format,
    target: 'es2022',
    minify: options.minify ?? false,
    logLevel: 'silent',
    metafile: false,
  });
  if (result.errors.length > 0) throw new Error(result.errors.map((error) => error.text).join('\n'));
  return readFile(join(dir, outfile), 'utf8');
}

export const WORKERS = ['workerd', 'worker', 'browser'];
export const EDGE = ['edge-light', 'worker', 'browser'];
