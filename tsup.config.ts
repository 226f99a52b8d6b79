import { defineConfig } from 'tsup';

/** Public entry points: `jobhook`, `jobhook/express`, … (see `exports` in package.json). */
const library = {
  index: 'src/index.ts',
  extend: 'src/extend.ts',
  express: 'adapters/express.ts',
  hono: 'adapters/hono.ts',
  node: 'adapters/node.ts',
  fastify: 'adapters/fastify.ts',
  koa: 'adapters/koa.ts',
  client: 'src/client/index.ts',
  testing: 'src/testing/index.ts',
  redis: 'src/redis/index.ts',
  postgres: 'src/postgres/index.ts',
  sqlite: 'src/sqlite/index.ts',
  bullmq: 'src/bullmq/index.ts',
  'pg-boss': 'src/pg-boss/index.ts',
  nats: 'src/nats/index.ts',
  otel: 'src/otel/index.ts',
  // `jobhook/testing` on Workers, Edge and browsers (the `workerd`, `worker`, `edge-light` and
  // `browser` conditions in package.json `exports`): signDelivery only, returning a promise.
  'testing-web': 'src/testing/web.ts',
  // The two forms of `#runtime` (package.json `imports`): node:crypto on Node, Deno and Bun, Web
  // APIs everywhere else. The core imports `#runtime` by that name, kept external below, so the
  // runtime that loads the package (or the bundler that packs it) picks the form by its conditions.
  'runtime-node': 'src/runtime/node.ts',
  'runtime-web': 'src/runtime/web.ts',
};

/** Resolved at load time through package.json `imports`, never bundled. */
const external = ['#runtime'];

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
    external,
    // tsup strips `node:` by default, turning `node:crypto` into `crypto`, which Workers and the
    // Edge Runtime cannot resolve. Only runtime-node and the Node-only entries import node:*.
    removeNodeProtocol: false,
    // jobhook/sqlite loads better-sqlite3 with createRequire(import.meta.url); CommonJS has no
    // import.meta, and its module's own path, which createRequire takes as well, is __filename.
    esbuildOptions(options, context) {
      if (context.format === 'cjs') options.define = { ...options.define, 'import.meta.url': '__filename' };
    },
    tsconfig: 'tsconfig.build.json',
  },
  {
    // The `jobhook` binary: ESM only, no types. It imports the package by its public names, which
    // stay imports (resolved through the package's own `exports`), so it shares the library's code.
    entry: { cli: 'src/tools/cli/main.ts' },
    external: [/^jobhook(\/|$)/, ...external],
    removeNodeProtocol: false,
    tsconfig: 'tsconfig.build.json',
    format: ['esm'],
    target: 'node20',
    platform: 'node',
    outDir: 'dist',
    clean: false,
  },
]);
