/**
 * Instructions per delivery, counted by valgrind's callgrind: a measure the machine's load moves
 * far less than the timings of a shared machine (bench/NOTES.md). Each case runs twice in its own
 * process (instructions-process.ts), both warmed up alike, counted from then on, and counting
 * `deliveries` and `2 × deliveries` deliveries; the difference over `deliveries` is one delivery's
 * count in the steady state. Skipped, with one line, without valgrind.
 */
import { execFile, spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';

/** The cases counted, each in processes of its own (instructions-process.ts). */
export const INSTRUCTION_CASES = [
  'floor',
  'jobhook',
  'floorString',
  'jobhookString',
  'standardwebhooksString',
  'jobhookBefore',
  'jobhookStringBefore',
] as const;
export type InstructionCase = (typeof INSTRUCTION_CASES)[number];

/** The build before's cases, counted only when the bench was given one (BENCH_BASELINE). */
const BEFORE_CASES: readonly InstructionCase[] = ['jobhookBefore', 'jobhookStringBefore'];

export interface InstructionOptions {
  /** Deliveries run before the counted ones in both processes (first-call compilation, tier-up). */
  warmup: number;
  /** The deliveries the two processes differ by. */
  deliveries: number;
  /** Count the build before's `receive()` too (a BENCH_BASELINE snapshot next to the scripts). */
  before?: boolean;
}

export interface InstructionResults {
  options: InstructionOptions;
  /** Instructions per delivery of each case; empty when skipped. */
  perDelivery: Partial<Record<InstructionCase, number>>;
  /** The command that counts one process, with its arguments as placeholders. */
  command: string;
  /** Why nothing was counted, when it was not. */
  skipped?: string;
}

const runFile = promisify(execFile);
const script = fileURLToPath(new URL('./instructions-process.js', import.meta.url));

const VALGRIND = ['--tool=callgrind', '--callgrind-out-file=/dev/null', '--instr-atstart=no'];
/**
 * V8's predictable mode: one thread (it compiles and collects garbage on the main one, where
 * callgrind counts it) and nothing scheduled by the clock, which valgrind's slowdown and the
 * machine's load stretch; fixed seeds for its hash tables and Math.random; `gc()`, which the
 * process calls before counting. Without them the same count moved by up to 18 % between runs
 * (bench/NOTES.md).
 */
const NODE_FLAGS = ['--predictable', '--hash-seed=1', '--random-seed=1', '--expose-gc'];

export const INSTRUCTION_COMMAND = `valgrind ${VALGRIND.join(' ')} node ${NODE_FLAGS.join(' ')} node_modules/.cache/jobhook-bench/instructions-process.js <case> <warmup> <count> <made>`;

/** The instructions one process executed, from callgrind's summary on stderr. */
async function countProcess(name: InstructionCase, numbers: number[]): Promise<number> {
  const { stderr } = await runFile(
    'valgrind',
    [...VALGRIND, process.execPath, ...NODE_FLAGS, script, name, ...numbers.map(String)],
    { maxBuffer: 16 * 1024 * 1024 },
  );
  const match = /Collected : (\d+)/.exec(stderr);
  if (!match)
    throw new Error(`valgrind printed no count for ${name} ${numbers.join(' ')}: ${stderr.slice(-500)}`);
  return Number(match[1]);
}

export function valgrindMissing(): string | undefined {
  const probe = spawnSync('valgrind', ['--version'], { encoding: 'utf8' });
  if (probe.error || probe.status !== 0) {
    return 'instructions per delivery: valgrind is not installed (apt-get install valgrind), skipped';
  }
  return undefined;
}

/** Each case's two processes run side by side: a count does not depend on what else runs. */
export async function runInstructions(options: InstructionOptions): Promise<InstructionResults> {
  const results: InstructionResults = { options, perDelivery: {}, command: INSTRUCTION_COMMAND };
  const missing = valgrindMissing();
  if (missing) return { ...results, skipped: missing };
  const { warmup, deliveries } = options;
  const cases = INSTRUCTION_CASES.filter((name) => options.before || !BEFORE_CASES.includes(name));
  for (const name of cases) {
    const [once, twice] = await Promise.all([
      countProcess(name, [warmup, deliveries, 2 * deliveries]),
      countProcess(name, [warmup, 2 * deliveries, 2 * deliveries]),
    ]);
    results.perDelivery[name] = (twice - once) / deliveries;
  }
  return results;
}
