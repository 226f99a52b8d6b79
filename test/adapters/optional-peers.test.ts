// The frameworks, the stores' clients and @opentelemetry/api are optional peers: no entry point but
// jobhook/otel loads one at runtime (adapters and stores only take their types), so each loads
// without any of them installed.
// Follows the runtime imports (type-only imports erased, as the build erases them) from each entry.
import { readFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '../..');

/** The packages a file needs at runtime, through all of its relative imports. */
function runtimePackages(entry: string): Set<string> {
  const packages = new Set<string>();
  const seen = new Set<string>();
  const visit = (file: string) => {
    if (seen.has(file)) return;
    seen.add(file);
    const { outputText } = ts.transpileModule(readFileSync(file, 'utf8'), {
      compilerOptions: {
        module: ts.ModuleKind.ESNext,
        target: ts.ScriptTarget.ES2022,
        verbatimModuleSyntax: true,
      },
    });
    for (const { fileName } of ts.preProcessFile(outputText, true, true).importedFiles) {
      if (fileName.startsWith('.')) visit(resolve(dirname(file), fileName.replace(/\.js$/, '.ts')));
      else packages.add(fileName);
    }
  };
  visit(resolve(root, entry));
  return packages;
}

describe.each([
  'src/index.ts',
  'adapters/node.ts',
  'adapters/express.ts',
  'adapters/hono.ts',
  'adapters/fastify.ts',
  'adapters/koa.ts',
  'src/redis/index.ts',
  'src/postgres/index.ts',
])('%s', (entry) => {
  it('imports no optional peer at runtime (web frameworks, ioredis, pg, @opentelemetry/api)', () => {
    const packages = [...runtimePackages(entry)];
    expect(
      packages.filter((name) =>
        /^(express|hono|fastify|koa|@koa\/.*|ioredis|pg|@opentelemetry\/api)(\/|$)/.test(name),
      ),
    ).toEqual([]);
  });
});

it('sees @opentelemetry/api imported by jobhook/otel, its only importer', () => {
  expect([...runtimePackages('src/otel/index.ts')]).toContain('@opentelemetry/api');
});

it('sees the peers where they are imported, so the check above can fail', () => {
  // The adapters import only types from their frameworks; a value import would show up here.
  expect([...runtimePackages('test/conformance/targets.ts')]).toEqual(
    expect.arrayContaining(['express', 'express4', 'hono', 'fastify', 'koa']),
  );
});
