/**
 * A small timing harness for interleaved, repeated measurements. Each case times batches of `n`
 * operations after preparing their inputs untimed; every round runs every case once (in a rotated
 * order), so cases compared in a ratio ran side by side, under the same load on a shared machine.
 */
import { performance } from 'node:perf_hooks';

export interface Case {
  name: string;
  /** Runs `n` operations and returns the elapsed milliseconds (input preparation excluded). */
  batch(n: number): Promise<number>;
}

/** Nanoseconds per operation of each case, one entry per round. */
export type Samples = Record<string, number[]>;

/** A case whose operation may be sync or async (a returned promise is awaited). */
export function bench<P>(
  name: string,
  prepare: (n: number) => P,
  op: (prepared: P, i: number) => unknown,
): Case {
  return {
    name,
    async batch(n) {
      const prepared = prepare(n);
      const start = performance.now();
      for (let i = 0; i < n; i++) {
        const result = op(prepared, i);
        if (result instanceof Promise) await result;
      }
      return performance.now() - start;
    },
  };
}

export interface CompareOptions {
  rounds: number;
  /** Target duration of one batch, in milliseconds. */
  batchMs: number;
  /** Warm-up per case before the rounds, in milliseconds. */
  warmupMs: number;
}

/** Finds a batch size that takes about `batchMs`, warming the case up on the way. */
async function calibrate(c: Case, batchMs: number, warmupMs: number): Promise<number> {
  let n = 1;
  let spent = 0;
  for (;;) {
    const elapsed = await c.batch(n);
    spent += elapsed;
    if (elapsed >= batchMs / 4 && spent >= warmupMs) {
      return Math.max(1, Math.round((n * batchMs) / Math.max(elapsed, 0.001)));
    }
    if (elapsed < batchMs / 4) n *= 2;
  }
}

export async function compare(cases: Case[], options: CompareOptions): Promise<Samples> {
  const sizes = new Map<Case, number>();
  for (const c of cases) sizes.set(c, await calibrate(c, options.batchMs, options.warmupMs));
  const samples: Samples = Object.fromEntries(cases.map((c) => [c.name, [] as number[]]));
  for (let round = 0; round < options.rounds; round++) {
    for (let k = 0; k < cases.length; k++) {
      const c = cases[(round + k) % cases.length]!;
      const n = sizes.get(c)!;
      const elapsed = await c.batch(n);
      samples[c.name]!.push((elapsed * 1e6) / n);
    }
  }
  return samples;
}

export function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}

/** Median over rounds of `a / b`, each ratio taken within one round. */
export function ratio(samples: Samples, a: string, b: string): number {
  const x = samples[a]!;
  const y = samples[b]!;
  return median(x.map((value, i) => value / y[i]!));
}

export function formatNs(ns: number): string {
  if (ns >= 1e6) return `${(ns / 1e6).toFixed(2)} ms`;
  if (ns >= 1e3) return `${(ns / 1e3).toFixed(ns >= 1e5 ? 0 : 1)} µs`;
  return `${ns.toFixed(0)} ns`;
}
