// The frameworks, the stores' clients, bullmq and @opentelemetry/api are optional peers: no entry
// point but jobhook/otel loads one at load time (adapters and stores only take their types), so
// each loads without any of them installed; jobhook/bullmq loads bullmq only inside runWorker,
// with a dynamic import; jobhook/pg-boss never loads pg-boss and jobhook/nats loads
// @nats-io/transport-node only in retryFailed (each is given its client).
// Follows the runtime imports (type-only imports erased, as the build erases them) from each entry.
import { readFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '../..');

/**
 * The packages a file needs at load time, through all of its relative imports; with `dynamic`,
 * also those it loads later with `import()`.
 */
function runtimePackages(entry: string, dynamic = false): Set<string> {
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
    for (const fileName of importsOf(outputText, dynamic)) {
      if (fileName.startsWith('.')) visit(resolve(dirname(file), fileName.replace(/\.js$/, '.ts')));
      else packages.add(fileName);
    }
  };
  visit(resolve(root, entry));
  return packages;
}

/** The specifiers of `import`/`export ... from` statements, and of `import()` calls with `dynamic`. */
function importsOf(code: string, dynamic: boolean): string[] {
  const found: string[] = [];
  const visit = (node: ts.Node) => {
    if ((ts.isImportDeclaration(node) || ts.isExportDeclaration(node)) && node.moduleSpecifier) {
      if (ts.isStringLiteral(node.moduleSpecifier)) found.push(node.moduleSpecifier.text);
    } else if (
      dynamic &&
      ts.isCallExpression(node) &&
      node.expression.kind === ts.SyntaxKind.ImportKeyword &&
      node.arguments[0] &&
      ts.isStringLiteral(node.arguments[0])
    ) {
      found.push(node.arguments[0].text);
    }
    ts.forEachChild(node, visit);
  };
  visit(ts.createSourceFile('module.js', code, ts.ScriptTarget.ES2022, true));
  return found;
}

describe.each([
  'src/index.ts',
  'src/extend.ts',
  'adapters/node.ts',
  'adapters/express.ts',
  'adapters/hono.ts',
  'adapters/fastify.ts',
  'adapters/koa.ts',
  'src/redis/index.ts',
  'src/postgres/index.ts',
  'src/sqlite/index.ts',
  'src/bullmq/index.ts',
  'src/pg-boss/index.ts',
  'src/nats/index.ts',
])('%s', (entry) => {
  it('imports no optional peer at load time (web frameworks, ioredis, pg, pg-boss, bullmq, @nats-io/*, @opentelemetry/api)', () => {
    const packages = [...runtimePackages(entry)];
    expect(
      packages.filter((name) =>
        /^(express|hono|fastify|koa|@koa\/.*|ioredis|pg|pg-boss|bullmq|better-sqlite3|@nats-io\/.*|@opentelemetry\/api)(\/|$)/.test(
          name,
        ),
      ),
    ).toEqual([]);
  });
});

it('jobhook never loads bullmq, not even later; jobhook/bullmq loads it in runWorker only', () => {
  expect([...runtimePackages('src/index.ts', true)].filter((name) => name.startsWith('bullmq'))).toEqual([]);
  expect([...runtimePackages('src/bullmq/index.ts', true)]).toContain('bullmq');
});

it('jobhook/nats loads @nats-io/transport-node only later, never @nats-io/jetstream; jobhook/pg-boss never loads pg-boss', () => {
  expect(
    [...runtimePackages('src/nats/index.ts', true)].filter((name) => name.startsWith('@nats-io/')),
  ).toEqual(['@nats-io/transport-node']);
  expect([...runtimePackages('src/pg-boss/index.ts', true)]).not.toContain('pg-boss');
});

it('sees @opentelemetry/api imported by jobhook/otel, its only importer', () => {
  expect([...runtimePackages('src/otel/index.ts')]).toContain('@opentelemetry/api');
});

it('sees the peers where they are imported, so the check above can fail', () => {
  // The adapters import only types from their frameworks; a value import would show up here.
  expect([...runtimePackages('test/adapters/targets.ts')]).toEqual(
    expect.arrayContaining(['express', 'express4', 'hono', 'fastify', 'koa']),
  );
});
