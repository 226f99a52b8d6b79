// The layers of docs/design.md, checked on the imports themselves: no module imports from a higher
// layer (nor from another folder of its own layer), no modules import each other in a loop, and the
// tools (src/tools/) reach the library only by its public names. Imports by public name (`jobhook`,
// `jobhook/extend`, …) count as imports of the entry file they resolve to (package.json `exports`,
// through tsup.config.ts). A new import that breaks any of these fails here, naming the file and the import.
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import config from '../../tsup.config.js';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../..');

/**
 * Each folder's layer, lowest first: a module may import its own folder and lower layers only.
 * The core (up to receiver/) depends on nothing above it; everything users mount or call from
 * outside (adapters, client, stores, hand-offs, telemetry, testing kit) sits on the core.
 */
const LAYERS: Record<string, number> = {
  common: 0,
  runtime: 1,
  wire: 2,
  events: 3,
  signatures: 3,
  results: 3,
  dedupe: 4,
  handoff: 4,
  inbox: 4,
  tracker: 3,
  reconcile: 4,
  contract: 4,
  receiver: 5,
  adapters: 6,
  client: 6,
  redis: 6,
  postgres: 6,
  sqlite: 6,
  bullmq: 6,
  'pg-boss': 6,
  nats: 6,
  otel: 6,
  testing: 6,
  // `jobhook` and `jobhook/extend` (src/index.ts, src/extend.ts).
  index: 8,
  // The tools wing: on the library's public entries, above them all.
  'tools/simulator': 9,
  'tools/probe': 9,
  // The one library entry that gathers a tool: `jobhook/testing` re-exports the simulator's startGateway.
  'testing/index': 10,
  'tools/cli': 11,
};

/** The file each public name resolves to (`jobhook` is `index`), from tsup.config.ts. */
const ENTRY_FILES: Record<string, string> = Object.fromEntries(
  Object.entries((config as unknown as { entry: Record<string, string> }[])[0]!.entry).map(([name, file]) => [
    name === 'index' ? 'jobhook' : `jobhook/${name}`,
    file,
  ]),
);

type Graph = Map<string, string[]>;

function sourceFiles(dir: string): string[] {
  return readdirSync(join(ROOT, dir), { withFileTypes: true, recursive: true })
    .filter((entry) => entry.isFile() && entry.name.endsWith('.ts') && !entry.name.endsWith('.d.ts'))
    .map((entry) => relative(ROOT, join(entry.parentPath, entry.name)));
}

const IMPORT = /(?:^|\n)\s*(?:import|export)\s[^;]*?from\s*['"]([^'"]+)['"]/g;

/** Every module's imports of other modules of the package, as paths from the repository root. */
function importGraph(files: readonly string[]): { graph: Graph; byName: Set<string> } {
  const graph: Graph = new Map();
  const byName = new Set<string>();
  for (const file of files) {
    const text = readFileSync(join(ROOT, file), 'utf8');
    const targets: string[] = [];
    for (const [, specifier] of text.matchAll(IMPORT)) {
      if (specifier === '#runtime') targets.push('src/runtime/contract.ts');
      else if (/^jobhook(\/|$)/.test(specifier!)) {
        const target = ENTRY_FILES[specifier!] ?? `${specifier}: no such entry`;
        targets.push(target);
        byName.add(`${file} -> ${target}`);
      } else if (specifier!.startsWith('.')) {
        targets.push(relative(ROOT, resolve(ROOT, dirname(file), specifier!.replace(/\.js$/, '.ts'))));
      }
    }
    graph.set(file, targets);
  }
  return { graph, byName };
}

function folderOf(file: string): string {
  if (file.startsWith('adapters/')) return 'adapters';
  if (file === 'src/testing/index.ts') return 'testing/index';
  const [, folder, rest] = file.split('/');
  if (folder === 'tools') return `tools/${rest!.split('/')[0]!}`;
  return rest === undefined ? 'index' : folder!;
}

const isTool = (file: string) => file.startsWith('src/tools/');

/**
 * Imports that cross between the tools and the library other than by a public name (`byName` holds
 * `file -> target` of each import by public name), and the library's imports of itself by one.
 */
export function privateImports(graph: Graph, byName: ReadonlySet<string>): string[] {
  const found: string[] = [];
  for (const [file, targets] of graph) {
    for (const target of targets) {
      const named = byName.has(`${file} -> ${target}`);
      if (isTool(file) && !isTool(target) && !named) found.push(`${file} -> ${target}: not by a public name`);
      if (!isTool(file) && named) found.push(`${file} -> ${target}: the library by its own public name`);
    }
  }
  return found;
}

/** Imports that go up a layer or sideways into another folder of the same layer. */
export function layerViolations(graph: Graph): string[] {
  const found: string[] = [];
  for (const [file, targets] of graph) {
    const from = folderOf(file);
    for (const target of targets) {
      const to = folderOf(target);
      if (from === to) continue;
      const [a, b] = [LAYERS[from], LAYERS[to]];
      if (a === undefined || b === undefined) found.push(`${file} -> ${target}: a folder with no layer`);
      else if (b >= a) found.push(`${file} (${from}, layer ${a}) -> ${target} (${to}, layer ${b})`);
    }
  }
  return found;
}

/** Each import that closes a loop, as `file -> import`. */
export function importLoops(graph: Graph): string[] {
  const found: string[] = [];
  const state = new Map<string, 'visiting' | 'done'>();
  const visit = (file: string) => {
    state.set(file, 'visiting');
    for (const target of graph.get(file) ?? []) {
      const seen = state.get(target);
      if (seen === 'visiting') found.push(`${file} -> ${target}`);
      else if (seen === undefined && graph.has(target)) visit(target);
    }
    state.set(file, 'done');
  };
  for (const file of [...graph.keys()].sort()) if (!state.has(file)) visit(file);
  return found;
}

const { graph, byName } = importGraph([...sourceFiles('src'), ...sourceFiles('adapters')]);

describe('layering', () => {
  it('reads the imports of every module, by relative path and by public name', () => {
    expect(graph.size).toBeGreaterThan(100);
    expect(graph.get('src/receiver/pipeline.ts')).toContain('src/wire/body.ts');
    expect(graph.get('src/tools/probe/probe.ts')).toContain('src/index.ts');
    expect(byName).toContain('src/tools/probe/probe.ts -> src/client/index.ts');
  });

  it('no module imports from a higher layer or a sibling folder of its layer', () => {
    expect(layerViolations(graph)).toEqual([]);
  });

  it('no modules import each other in a loop', () => {
    expect(importLoops(graph)).toEqual([]);
  });

  it('the tools reach the library by its public names only, and the library never by them', () => {
    expect(privateImports(graph, byName)).toEqual([]);
  });

  it('the checks catch what they are for', () => {
    const bad: Graph = new Map([
      ['src/wire/answers.ts', ['src/signatures/refusals.ts']],
      ['src/client/client.ts', ['src/client/register.ts']],
      ['src/client/register.ts', ['src/client/client.ts']],
      ['src/signatures/refusals.ts', []],
      ['src/tools/probe/probe.ts', ['src/wire/headers.ts', 'src/extend.ts', 'src/tools/probe/report.ts']],
      ['src/tools/simulator/index.ts', ['src/testing/index.ts']],
      ['src/testing/index.ts', ['src/tools/simulator/index.ts']],
      ['src/bullmq/worker.ts', ['src/index.ts']],
    ]);
    const named = new Set([
      'src/tools/probe/probe.ts -> src/extend.ts',
      'src/tools/simulator/index.ts -> src/testing/index.ts',
      'src/bullmq/worker.ts -> src/index.ts',
    ]);
    expect(layerViolations(bad)).toEqual([
      'src/wire/answers.ts (wire, layer 2) -> src/signatures/refusals.ts (signatures, layer 3)',
      'src/tools/simulator/index.ts (tools/simulator, layer 9) -> src/testing/index.ts (testing/index, layer 10)',
      'src/bullmq/worker.ts (bullmq, layer 6) -> src/index.ts (index, layer 8)',
    ]);
    expect(importLoops(bad)).toEqual([
      'src/client/register.ts -> src/client/client.ts',
      'src/tools/simulator/index.ts -> src/testing/index.ts',
    ]);
    expect(privateImports(bad, named)).toEqual([
      'src/tools/probe/probe.ts -> src/wire/headers.ts: not by a public name',
      'src/bullmq/worker.ts -> src/index.ts: the library by its own public name',
    ]);
  });
});
