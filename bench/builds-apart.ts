/**
 * `receive()` of the build before (BENCH_BASELINE) and of this one, each alone in its own process
 * (one-build.ts), the two run alternately: in one process the builds share a heap and the inline
 * caches of zod and node:crypto, and which one runs first moved its figure by up to 25 %.
 */
import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';

export type BodyForm = 'bytes' | 'string';

/** CPU µs per delivery of each process, and after / before of each pair run back to back. */
export interface ApartSamples {
  before: number[];
  after: number[];
  ratios: number[];
}

export type ApartResults = Record<BodyForm, ApartSamples>;

const runFile = promisify(execFile);
const script = fileURLToPath(new URL('./one-build.js', import.meta.url));

async function oneBuild(dist: string, form: BodyForm): Promise<number> {
  const { stdout } = await runFile(process.execPath, [script, dist, form]);
  const perDelivery = Number(stdout.trim());
  if (!(perDelivery > 0)) throw new Error(`one-build.js ${dist} ${form} printed ${JSON.stringify(stdout)}`);
  return perDelivery;
}

/** `pairs` pairs of processes per body form, which build goes first alternating pair by pair. */
export async function runBuildsApart(
  dists: { before: string; after: string },
  pairs: number,
): Promise<ApartResults> {
  const results = {} as ApartResults;
  for (const form of ['bytes', 'string'] as const) {
    const samples: ApartSamples = { before: [], after: [], ratios: [] };
    for (let pair = 0; pair < pairs; pair++) {
      const order = pair % 2 === 0 ? (['before', 'after'] as const) : (['after', 'before'] as const);
      const measured = { before: 0, after: 0 };
      for (const build of order) measured[build] = await oneBuild(dists[build], form);
      samples.before.push(measured.before);
      samples.after.push(measured.after);
      samples.ratios.push(measured.after / measured.before);
    }
    results[form] = samples;
  }
  return results;
}
