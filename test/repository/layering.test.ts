// The layers of docs/design.md, checked on the imports themselves: no module imports from a higher
// layer (nor from another folder of its own layer), and no modules import each other in a loop.
// A new import that breaks either fails here, naming the file and the import.
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

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
  probe: 6,
  cli: 7,
  index: 8,
};

type Graph = Map<string, string[]>;

function sourceFiles(dir: string): string[] {
  return readdirSync(join(ROOT, dir), { withFileTypes: true, recursive: true })
    .filter((entry) => entry.isFile() && entry.name.endsWith('.ts') && !entry.name.endsWith('.d.ts'))
    .map((entry) => relative(ROOT, join(entry.parentPath, entry.name)));
}

const IMPORT = /(?:^|\n)\s*(?:import|export)\s[^;]*?from\s*['"]([^'"]+)['"]/g;

/** Every module's imports of other modules of the package, as paths from the repository root. */
function importGraph(files: readonly string[]): Graph {
  const graph: Graph = new Map();
  for (const file of files) {
    const text = readFileSync(join(ROOT, file), 'utf8');
    const targets: string[] = [];
    for (const [, specifier] of text.matchAll(IMPORT)) {
      if (specifier === '#runtime') targets.push('src/runtime/contract.ts');
      else if (specifier!.startsWith('.')) {
        targets.push(relative(ROOT, resolve(ROOT, dirname(file), specifier!.replace(/\.js$/, '.ts'))));
      }
    }
    graph.set(file, targets);
  }
  return graph;
}

function folderOf(file: string): string {
  if (file.startsWith('adapters/')) return 'adapters';
  const [, folder, rest] = file.split('/');
  return rest === undefined ? 'index' : folder!;
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

const graph = importGraph([...sourceFiles('src'), ...sourceFiles('adapters')]);

describe('layering', () => {
  it('reads the imports of every module', () => {
    expect(graph.size).toBeGreaterThan(100);
    expect(graph.get('src/receiver/pipeline.ts')).toContain('src/wire/body.ts');
  });

  it('no module imports from a higher layer or a sibling folder of its layer', () => {
    expect(layerViolations(graph)).toEqual([]);
  });

  it('no modules import each other in a loop', () => {
    expect(importLoops(graph)).toEqual([]);
  });

  it('the checks catch what they are for', () => {
    const bad: Graph = new Map([
      ['src/wire/answers.ts', ['src/signatures/refusals.ts']],
      ['src/client/client.ts', ['src/client/register.ts']],
      ['src/client/register.ts', ['src/client/client.ts']],
      ['src/signatures/refusals.ts', []],
    ]);
    expect(layerViolations(bad)).toEqual([
      'src/wire/answers.ts (wire, layer 2) -> src/signatures/refusals.ts (signatures, layer 3)',
    ]);
    expect(importLoops(bad)).toEqual(['src/client/register.ts -> src/client/client.ts']);
  });
});
