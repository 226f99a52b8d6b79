import { defineConfig } from 'tsup';

/** Public entry points: `jobhook`, `jobhook/express`, … (see `exports` in package.json). */
const library = {
  index: 'src/index.ts',
  express: 'adapters/express.ts',
  hono: 'adapters/hono.ts',
  node: 'adapters/node.ts',
  fastify: 'adapters/fastify.ts',
  koa: 'adapters/koa.ts',
  client: 'src/client/index.ts',
  testing: 'src/testing/index.ts',
};

export default defineConfig([
  {
    // ESM (.js + .d.ts) and CommonJS (.cjs + .d.cts). Shared code goes to chunks in both formats, so
    // `jobhook` and `jobhook/client` share one JobhookError class within each format.
    entry: library,
    format: ['esm', 'cjs'],
    dts: true,
    splitting: true,
    target: 'node20',
    platform: 'node',
    outDir: 'dist',
    clean: false, // the build script empties dist/ first: both builds run at once
    treeshake: false,
    tsconfig: 'tsconfig.build.json',
  },
  {
    // The `jobhook` binary: ESM only, no types. It imports the package by its public names, which
    // stay imports (resolved through the package's own `exports`), so it shares the library's code.
    entry: { cli: 'src/cli/main.ts' },
    external: [/^jobhook(\/|$)/],
    tsconfig: 'tsconfig.build.json',
    format: ['esm'],
    target: 'node20',
    platform: 'node',
    outDir: 'dist',
    clean: false,
  },
]);
